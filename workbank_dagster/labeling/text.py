"""Prompt text handling for the embedder: language check and chunking of long prompts.

all-MiniLM-L6-v2 reads 256 word-piece tokens. A long prompt (an issue, a Kaggle page, a writing
brief with reference material) is cut into windows of `words_per_chunk` words (about 200 tokens for
English), each embedded, and the prompt's vector is the normalised mean of its chunks: the whole
prompt counts, not its first 256 tokens.
"""

from __future__ import annotations

import re

import numpy as np

from ..settings import WORDS_PER_CHUNK

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
MAX_CHUNKS = 12


def cjk_share(text: str) -> float:
    visible = [c for c in text if not c.isspace()]
    if not visible:
        return 0.0
    return sum(1 for c in visible if _CJK.match(c)) / len(visible)


def is_mostly_cjk(text: str) -> bool:
    """True when a fifth or more of the text's visible characters are CJK script.

    The only script the pipeline detects: such a prompt is left unlabeled, because the embedding
    model reads English only. Any other text counts as readable, whatever its language."""
    return cjk_share(text) >= 0.2


def chunk_text(text: str, words_per_chunk: int = WORDS_PER_CHUNK, max_chunks: int = MAX_CHUNKS) -> list[str]:
    words = text.split()
    if not words:
        return []
    chunks = [" ".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]
    if len(chunks) > max_chunks:
        # Keep the whole span represented: evenly spaced windows rather than only the head.
        picks = np.linspace(0, len(chunks) - 1, max_chunks).round().astype(int)
        chunks = [chunks[i] for i in sorted(set(picks.tolist()))]
    return chunks


def pool_chunks(chunk_vectors: np.ndarray, owners: np.ndarray, n_texts: int) -> np.ndarray:
    """Mean of each text's chunk vectors, re-normalised; `owners[i]` is the text of chunk i."""
    dim = chunk_vectors.shape[1] if chunk_vectors.ndim == 2 else 0
    pooled = np.zeros((n_texts, dim), dtype=np.float32)
    np.add.at(pooled, owners, chunk_vectors)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    np.divide(pooled, norms, out=pooled, where=norms > 0)
    return pooled


# "You are a property manager…", "As the Director of Parks and Recreation, …", "It is May 2025 and you
# are a financial analyst…", "You are Jane Doe, a real estate broker…": the role a prompt asks the
# worker to play names the occupation better than anything else in it.
_ABBREVIATION = re.compile(r"\b([A-Z])\.([A-Z])\.(?:([A-Z])\.)?")  # U.S. -> US, so the dots do not end the phrase
_ROLE = re.compile(
    r"(?:(?:^|[.!?]\s+|[,;]\s*|\n)\s*(?:and\s+|so\s+)?(?:as|act as|acting as|in your (?:role|capacity) as|your role is|imagine you are|assume the role of)"
    r"|\b(?:you are|you're|you\u2019re|you work as|you have been hired as|you've been hired as|you serve as|you are working as|you are acting as))"
    r"\s+(?:(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2}),\s+)?(?:an?|the|our|your)\s+([A-Za-z][^.,;:()\n]{2,80})",
    re.IGNORECASE,
)
# Where the role ends: a preposition, a relative clause or a participle ("a broker licensed in Florida",
# "a nurse caring for…", "a project manager supporting…"), never at the phrase's first word.
_ROLE_CUT = re.compile(
    r"(?<=\s)(?:at|for|in|with|who|whom|that|which|where|whose|you|working|responsible|of a|of an|on|tasked|based|located|"
    r"specializing|specialising|supporting|leading|overseeing|involved|assigned|caring|focused|representing|serving|"
    r"licensed|from|within|doing|maintaining|proficient)\b",
    re.IGNORECASE,
)
# Seniority and tenure say nothing about the occupation ("senior category buyer", "newly hired VP of Sales").
_MODIFIER = re.compile(
    r"^(?:(?:senior|junior|lead|new|newly (?:hired|appointed|promoted)|recently hired|mid-level|experienced|seasoned|current|expert|skilled)\s+)+",
    re.IGNORECASE,
)
_NOT_A_ROLE = re.compile(
    r"^(?:(?:helpful|friendly|smart|intelligent|expert|useful|autonomous|world-class|reasoning)\s+)*(?:ai|an ai|language model|assistant|"
    r"ai assistant|agent|ai agent|llm|chatbot|model|engine|employee|worker|person|individual|member|team member|staff member|professional|"
    r"expert|user|customer|part|result|example|follows|first step)$",
    re.IGNORECASE,
)
ROLE_MAX_WORDS = 7
_URL = re.compile(r"<?\b(?:https?://|www\.)[^\s<>()\"']+>?", re.IGNORECASE)


def role_phrase(text: str, window: int = 1500) -> str | None:
    """The first role the prompt assigns ("pediatric nurse practitioner"), or None."""
    text = _ABBREVIATION.sub(lambda m: "".join(g for g in m.groups() if g), text[:window])
    for match in _ROLE.finditer(text):
        phrase = _ROLE_CUT.split(match.group(1).strip(), maxsplit=1)[0].strip()
        if len(phrase.split()) > ROLE_MAX_WORDS:  # a clause ("a bit anxious and want to…"), not a job title
            continue
        phrase = _MODIFIER.sub("", phrase).strip()
        if len(phrase) >= 3 and not _NOT_A_ROLE.match(phrase):
            return phrase
    return None


def without_urls(text: str) -> str:
    """The text with its URLs removed: a host name ("the-agent-company.com") is not a word of the work."""
    return _URL.sub(" ", text)


# A personal errand (#38): the prompt asks the agent to act as a customer or a private person, for
# the speaker (buy this, add it to my cart, change my address, post in a forum). Nobody is paid for
# that work as such; the clerk who serves the customer is not doing it either. Matched only in a
# short request (at most ERRAND_MAX_WORDS words), and only where neither the prompt nor its
# benchmark's instruction gives the agent a worker's role (labels.personal_errands).
_ASK = r"(?:^|[.?!]\s+)(?:(?:can|could|would) you (?:please )?|please |i (?:want|would like|need) to |i'd like to |help me |now,? )?"
_ERRAND = re.compile(
    _ASK + r"(?:buy|purchase|order me|find me|get me|add\b[^.?!]{0,80}\bto (?:my|the) (?:shopping )?(?:cart|wish ?list))\b"
    r"|\b(?:my|our) (?:shopping cart|cart|wish ?list|wishlist|(?:most recent |latest |last )?orders?|purchases?|account|"
    r"(?:default )?(?:shipping |billing )?address|profile|subscriptions?|reviews?|posts?|comments?|listings?)\b"
    r"|" + _ASK + r"(?:post|comment|reply|upvote|downvote|subscribe|make a post)\b[^.?!]{0,100}\b(?:subreddit|forum|f/\w+)"
    r"|\bleave a (?:review|rating)\b",
    re.IGNORECASE,
)
ERRAND_MAX_WORDS = 60


def personal_errand(text: str) -> str | None:
    """The words that make a short request a personal errand ("add it to my cart"), or None."""
    if len(text.split()) > ERRAND_MAX_WORDS:
        return None
    found = _ERRAND.search(text)
    return " ".join(found.group(0).split()).strip(" .?!") if found else None
