// What the API reference uses of swagger-ui-dist's bundle, which ships no types.
declare module 'swagger-ui-dist/swagger-ui-es-bundle.js' {
  interface SwaggerRequest {
    url: string;
    headers: Record<string, string>;
  }
  interface SwaggerUIOptions {
    domNode: HTMLElement;
    spec: object;
    deepLinking?: boolean;
    tryItOutEnabled?: boolean;
    displayRequestDuration?: boolean;
    requestInterceptor?: (request: SwaggerRequest) => SwaggerRequest;
  }
  export default function SwaggerUIBundle(options: SwaggerUIOptions): unknown;
}
