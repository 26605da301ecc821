"""The web pages: Jinja2 templates and vendored static assets, and the headers every page carries.

Pages are rendered from the same services as the REST routes (the routes that serve them are in
server.routes); nothing here reads the database or the match service itself. Every asset is in
the package (`static/`, served at `/static`): no CDN, no build step.
"""
