// The interactive API reference of docs/api.md: Swagger UI (swagger-ui-dist) over the OpenAPI document served
// by the Kiln that serves this page, one surface at a time. "Execute" sends its requests to that Kiln, with
// the bearer token the reader enters here: kept in this page's memory only, never stored.
import { defineComponent, h, onMounted, ref, watch } from 'vue';
import './component.css';
import { surfaceDocument, type Surface } from './openapi-surface.ts';

const SURFACES: readonly { surface: Surface; label: string; document: string }[] = [
  { surface: 'platform', label: 'Platform API (/api)', document: '/api/openapi.json' },
  { surface: 'reference', label: 'Reference API (/v1)', document: '/v1/openapi' },
];

/**
 * Swagger UI and its styles are large: loaded on this page alone, once it is in the browser. The styles come as
 * text (Vite's ?inline) into a style element: VitePress links every stylesheet of the build from every page.
 */
async function loadSwaggerUi() {
  const [{ default: SwaggerUIBundle }, { default: styles }] = await Promise.all([
    import('swagger-ui-dist/swagger-ui-es-bundle.js'), import('swagger-ui-dist/swagger-ui.css?inline'),
  ]);
  if (!document.getElementById('swagger-ui-styles')) document.head.append(Object.assign(document.createElement('style'), { id: 'swagger-ui-styles', textContent: styles }));
  return SwaggerUIBundle;
}

export const ApiReference = defineComponent({
  name: 'ApiReference',
  // Rendered in the browser alone (<ClientOnly> in docs/api.md): it reads the page's address.
  setup() {
    const surface = ref<Surface>(new URLSearchParams(location.search).get('surface') === 'reference' ? 'reference' : 'platform');
    const token = ref('');
    const failure = ref('');
    const container = ref<HTMLElement>();

    async function show(chosen: Surface) {
      const { document: url } = SURFACES.find((s) => s.surface === chosen)!;
      failure.value = '';
      try {
        const response = await fetch(url, { headers: { accept: 'application/json' } });
        if (!response.ok) throw new Error(`${url} answered ${response.status}`);
        const [SwaggerUIBundle, spec] = await Promise.all([loadSwaggerUi(), response.json()]);
        if (surface.value !== chosen || !container.value) return; // switched again meanwhile
        // A fresh node for each document: Swagger UI renders into a node once.
        const domNode = document.createElement('div');
        container.value.replaceChildren(domNode);
        SwaggerUIBundle({
          domNode,
          spec: surfaceDocument(spec, chosen),
          deepLinking: true,
          tryItOutEnabled: true,
          displayRequestDuration: true,
          requestInterceptor: (request) => {
            if (token.value) request.headers.Authorization = `Bearer ${token.value.trim()}`;
            return request;
          },
        });
      } catch (error) {
        failure.value = `The OpenAPI document could not be loaded: ${(error as Error).message}`;
      }
    }

    onMounted(() => show(surface.value));
    watch(surface, (chosen) => {
      const url = new URL(location.href);
      url.searchParams.set('surface', chosen);
      history.replaceState(history.state, '', url);
      void show(chosen);
    });

    return () => h('div', { class: 'kiln-api-reference' }, [
      h('div', { class: 'kiln-api-reference__controls' }, [
        h('div', { role: 'group', 'aria-label': 'API surface' }, SURFACES.map((s) => h('button', {
          type: 'button', 'aria-pressed': surface.value === s.surface, onClick: () => { surface.value = s.surface; },
        }, s.label))),
        h('label', [
          'Bearer token ',
          h('input', {
            type: 'password', autocomplete: 'off', spellcheck: false, placeholder: 'sk_live_...',
            value: token.value, onInput: (event: Event) => { token.value = (event.target as HTMLInputElement).value; },
          }),
        ]),
      ]),
      failure.value ? h('p', { role: 'alert' }, failure.value) : null,
      h('div', { ref: container, class: 'kiln-api-reference__ui' }),
    ]);
  },
});
