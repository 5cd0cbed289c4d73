"""workbank-dagster: which work do AI benchmarks measure, and is it the work people want help with?"""
