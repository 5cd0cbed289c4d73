"""Headless Debian Chromium driven through its ChromeDriver (selenium), for the report tests.

Nothing is downloaded: the browser and driver are the Debian packages `chromium` and
`chromium-driver` (`make browser-deps` installs them); Selenium Manager is bypassed by naming
the driver's path. The flags keep Chromium off the closed network.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--window-size=1400,1000",
)


def missing() -> str | None:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists():
            return f"{path} is missing: run `make browser-deps` (Debian packages chromium, chromium-driver)"
    return None


@contextmanager
def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="wb-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def wait_for(driver, condition: str, timeout: float = 30.0) -> None:
    """Until the page's JavaScript `condition` is true; an AssertionError naming it after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.execute_script(condition):
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for: {condition}")
