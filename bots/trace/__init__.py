"""A search's tree, node by node, for teaching: `tree` runs a search with a recorder and keeps
its nodes (`arena trace`, the explorer's trace), `draw` writes them as text and `page` as an
HTML page. The recorder a search is given is bots.recorder.
"""
