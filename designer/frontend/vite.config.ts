/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Built into the Django app's static folder (git-ignored); Django's template reads
// .vite/manifest.json to reference the hashed files. No dev server in production.
export default defineConfig({
  plugins: [react()],
  base: "/static/designer/canvas/",
  build: {
    outDir: "../static/designer/canvas",
    emptyOutDir: true,
    manifest: true,
    sourcemap: false,
    rollupOptions: { input: "src/main.tsx" },
  },
  test: {
    environment: "jsdom",
    globals: true,
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
  },
});
