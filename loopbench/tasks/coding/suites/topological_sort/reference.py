import heapq


def topological_sort(graph: dict[str, list[str]]) -> list[str]:
    dependents: dict[str, set[str]] = {}
    waiting: dict[str, set[str]] = {}
    for node, needs in graph.items():
        waiting.setdefault(node, set()).update(needs)
        for need in needs:
            waiting.setdefault(need, set())
            dependents.setdefault(need, set()).add(node)
    ready = [node for node, needs in waiting.items() if not needs]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for dependent in dependents.get(node, ()):
            waiting[dependent].discard(node)
            if not waiting[dependent]:
                heapq.heappush(ready, dependent)
    if len(order) != len(waiting):
        raise ValueError("the dependencies contain a cycle")
    return order
