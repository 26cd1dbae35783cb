"""Generated depot-style task sets: a fictional haulage world no model has seen, an
encyclopedia over it, multi-hop questions, and a reference solver that answers them from
the encyclopedia's text alone (``loopbench tasks generate`` and ``tasks check``).

Modules, in the order a set is made: ``names`` (new proper names), ``world`` (companies,
depots, people, cities), ``encyclopedia`` (entries, related titles, the naming note),
``frames`` (the question grammar), ``questions`` (drafting), ``solver`` and ``reading``
(answering from text), ``build`` (the knobs, and every question checked), ``writer``
(the folder), ``check`` (the solver re-run over a written set), ``public`` (real facts).
"""
