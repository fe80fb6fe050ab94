/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { brotliCompressSync, gzipSync } from "node:zlib";
import type { Plugin } from "vite";

// Pre-compressed copies (.gz, .br) of the built assets: WhiteNoise serves them
// to browsers that accept them, with no compression work at run time.
// "post": after Vite's own generateBundle work, which fills in the chunks'
// preload lists (__VITE_PRELOAD__) once the app has dynamic imports; copies
// taken before it would serve the placeholder to every browser that takes gzip.
function precompress(): Plugin {
  return {
    name: "vnpu-precompress",
    apply: "build",
    generateBundle: {
      order: "post",
      handler(_options, bundle) {
        for (const file of Object.values(bundle)) {
          const source = file.type === "chunk" ? file.code : file.source;
          if (!/\.(js|css|html|svg|json)$/.test(file.fileName) || source.length < 1024) continue;
          const data = Buffer.from(source as string | Uint8Array);
          this.emitFile({ type: "asset", fileName: `${file.fileName}.gz`, source: gzipSync(data, { level: 9 }) });
          this.emitFile({ type: "asset", fileName: `${file.fileName}.br`, source: brotliCompressSync(data) });
        }
      },
    },
  };
}

// The portal the dev server proxies to (run it with ./scripts/run.sh).
const portal = process.env.PORTAL_URL ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react(), precompress()],
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  server: {
    port: 5173,
    proxy: {
      "/api": { target: portal, changeOrigin: false },
      "/admin": { target: portal, changeOrigin: false },
      "/static": { target: portal, changeOrigin: false },
      "/ws": { target: portal.replace(/^http/, "ws"), ws: true, changeOrigin: false },
    },
  },
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/testSetup.ts"],
    // Some tests wait up to 5 s for a render on a loaded CI machine (2 cores
    // shared with the browser and the control plane): vitest's own 5 s
    // default would end them first.
    testTimeout: 20_000,
  },
});
