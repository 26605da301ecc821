// Start Swagger UI (loaded from /docs/assets before this module) on the server's OpenAPI
// description. A module of its own, so the page needs no inline script.
const root = document.getElementById("swagger-ui");

// eslint-disable-next-line no-undef
SwaggerUIBundle({
  url: root.dataset.openapi,
  domNode: root,
  deepLinking: true,
  // eslint-disable-next-line no-undef
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  tryItOutEnabled: false,
  persistAuthorization: false,
});
