// The /docs page: Swagger UI (web/vendor) over the document its container names. A file, not
// an inline script, so the page's policy runs only the project's scripts.
const container = document.getElementById('swagger-ui');
window.ui = window.SwaggerUIBundle({ url: container.dataset.url, dom_id: '#swagger-ui' });
