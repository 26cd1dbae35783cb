def parse_csv_line(line: str) -> list[str]:
    fields: list[str] = []
    position = 0
    while True:
        if line.startswith('"', position):
            field, position = _quoted(line, position + 1)
            if position < len(line) and line[position] != ",":
                raise ValueError(f"text after a closing quote at {position}")
        else:
            end = line.find(",", position)
            end = len(line) if end == -1 else end
            field, position = line[position:end], end
        fields.append(field)
        if position == len(line):
            return fields
        position += 1


def _quoted(line: str, position: int) -> tuple[str, int]:
    parts: list[str] = []
    while True:
        end = line.find('"', position)
        if end == -1:
            raise ValueError("a quoted field is not closed")
        parts.append(line[position:end])
        if line.startswith('"', end + 1):
            parts.append('"')
            position = end + 2
        else:
            return "".join(parts), end + 1
