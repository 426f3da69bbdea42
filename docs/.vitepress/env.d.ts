/// <reference types="vitepress/client" />
// Vite's types for the site's code (its CSS imports, ?url), through VitePress's own Vite.
