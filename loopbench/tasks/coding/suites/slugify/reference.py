import re
import unicodedata


def slugify(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c) and c not in "'\u2019")
    return re.sub(r"[^a-z0-9]+", "-", kept.lower()).strip("-")
