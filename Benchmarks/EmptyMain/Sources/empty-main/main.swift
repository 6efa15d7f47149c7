// An empty Swift program: the cost of starting the Swift runtime and nothing else.
