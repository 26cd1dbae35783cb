"""Stand-ins for an endpoint, for tests and benchmarks: loopback servers that speak the
chat-completions API (scripted replies, injected faults, a scripted coder). They sit above
the models, patterns and task sets they imitate; nothing below imports them."""
