"""What the secret tests look for: a secret's runs of eight characters (what redaction
removes wherever it appears), and a text in base64 (a form an endpoint may echo it in)."""

import base64


def runs_of_eight(text: str) -> list[str]:
    """Every eight characters in a row of ``text``."""
    return [text[i : i + 8] for i in range(len(text) - 7)]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
