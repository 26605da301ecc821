"""A search's tree, node by node, for teaching: `tree` runs a search with a recorder and keeps
its nodes as a `model.Trace` (`arena trace`, the explorer's trace); `layout` places and folds
them, `labels` writes their values, `draw` draws them as text and SVG and `page` as an HTML
page. The recorder a search is given is bots.recorder.
"""
