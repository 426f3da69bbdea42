// The dashboard's build (`npm run build:web`): web/src to web/dist, which the API serves at / (control-plane/web-app/).
// `npx vite web` serves it with hot reload, passing the API's paths to the API that `npm start` runs.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const api = process.env.KILN_API_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: 'dist', emptyOutDir: true, sourcemap: true, target: 'es2022',
    // Rolldown's notice of slow plugins says more about a busy machine than about the build.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  server: {
    // The app imports the SDK from ../sdk.
    fs: { allow: ['..'] },
    proxy: { '/v1': { target: api, ws: true }, '/api': api },
  },
});
