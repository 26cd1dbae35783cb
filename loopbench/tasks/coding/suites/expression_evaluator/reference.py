import re

TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|(\*\*|[-+*/()]))")


def evaluate(expression: str) -> float:
    tokens = _tokenize(expression)
    parser = _Parser(tokens)
    value = parser.sum()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()!r}")
    return float(value)


def _tokenize(expression: str) -> list[str | float]:
    tokens: list[str | float] = []
    position = 0
    while position < len(expression):
        if expression[position:].strip() == "":
            break
        match = TOKEN.match(expression, position)
        if match is None:
            raise ValueError(f"unexpected character at {position}")
        number, operator = match.groups()
        tokens.append(float(number) if number is not None else operator)
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[str | float]) -> None:
        self.tokens = tokens
        self.index = 0

    def peek(self) -> str | float | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> str | float:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end of expression")
        self.index += 1
        return token

    def sum(self) -> float:
        value = self.product()
        while self.peek() in ("+", "-"):
            if self.take() == "+":
                value += self.product()
            else:
                value -= self.product()
        return value

    def product(self) -> float:
        value = self.unary()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value *= self.unary()
            else:
                value /= self.unary()
        return value

    def unary(self) -> float:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> float:
        base = self.primary()
        if self.peek() == "**":
            self.take()
            return float(base ** self.unary())
        return base

    def primary(self) -> float:
        token = self.take()
        if isinstance(token, float):
            return token
        if token == "(":
            value = self.sum()
            if self.take() != ")":
                raise ValueError("expected ')'")
            return value
        raise ValueError(f"unexpected {token!r}")
