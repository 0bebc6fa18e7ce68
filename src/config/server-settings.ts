/**
 * `server.yaml`: settings of the runtime server itself — browser origins allowed to use the
 * API, and the limits applied to every turn (step limit, retries, compaction, subagents).
 *
 * ```yaml
 * allowedOrigins: [http://localhost:5173]
 * limits:
 *   maxStepsPerTurn: 200
 *   compactionThreshold: 0.8
 *   retry: { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30000, streamIdleTimeoutMs: 300000 }
 *   subagents: { maxDepth: 1, maxOpenPerSession: 6 }
 * platform: { enabled: true }   # see platform-settings.ts
 * notifications: { webhooks: [] }   # see notification-settings.ts
 * browser: { enabled: true, idleTimeoutMs: 600000 }   # docs/browser.md
 * ```
 */
import { z } from 'zod';
import { BrowserOriginSchema } from './web-addresses.js';
import { DEFAULT_PLATFORM_SETTINGS, PlatformSettingsSchema } from './platform-settings.js';
import { DEFAULT_NOTIFICATION_SETTINGS, NotificationSettingsSchema } from './notification-settings.js';

/** The browser executable used when `browser.executablePath` is not given. */
export const DEFAULT_BROWSER_EXECUTABLE = '/usr/bin/chromium';

/** Default idle time after which the agent's browser is stopped, ms. */
export const DEFAULT_BROWSER_IDLE_TIMEOUT_MS = 600_000;

/** The whole `server.yaml`. */
export const ServerSettingsSchema = z.strictObject({
  /** Browser origins, besides the server's own, allowed to open the API WebSocket. */
  allowedOrigins: z.array(BrowserOriginSchema).default([]),
  limits: z
    .strictObject({
      /** Model calls allowed in one turn (an agent's `maxSteps` overrides it). */
      maxStepsPerTurn: z.number().int().min(1).max(10_000).optional(),
      /** Most text one tool result sends to the model, in bytes (longer output keeps its head and tail). */
      toolOutputLimitBytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional(),
      /** Largest file a client may upload (`POST /api/v1/uploads`), in bytes. */
      maxUploadBytes: z.number().int().min(1).max(1024 * 1024 * 1024).optional(),
      /** Compact when a request is estimated above this fraction of the model's context window. */
      compactionThreshold: z.number().gt(0).max(1).optional(),
      retry: z
        .strictObject({
          /** Retries of a failed model call after the first attempt. */
          maxRetries: z.number().int().min(0).max(20).optional(),
          /** First backoff delay, ms (doubles each retry). */
          baseDelayMs: z.number().int().min(0).max(60_000).optional(),
          /** Longest delay between two attempts, ms. */
          maxDelayMs: z.number().int().min(0).max(600_000).optional(),
          /** Silence after which a model stream counts as dropped and is retried, ms. */
          streamIdleTimeoutMs: z.number().int().min(1000).max(3_600_000).optional(),
        })
        .superRefine((retry, context) => {
          // The delay doubles from the first up to the longest: a first delay above it is a mistake in one of the two.
          if (retry.baseDelayMs !== undefined && retry.maxDelayMs !== undefined && retry.baseDelayMs > retry.maxDelayMs) {
            context.addIssue({ code: 'custom', path: ['baseDelayMs'], message: `the first delay (${retry.baseDelayMs} ms) is longer than maxDelayMs (${retry.maxDelayMs} ms)` });
          }
        })
        .optional(),
      subagents: z
        .strictObject({
          /** Deepest nesting of subagents (the root session is level 0). */
          maxDepth: z.number().int().min(0).max(5).optional(),
          /** Open subagents one session may have at once. */
          maxOpenPerSession: z.number().int().min(1).max(64).optional(),
        })
        .optional(),
    })
    .default({}),
  /** The agent's browser (docs/browser.md): a Chromium per working directory, offered as the MCP server `browser`. */
  browser: z
    .strictObject({
      /** Offer the browser to conversations on the local executor (default false). */
      enabled: z.boolean().default(false),
      /** A browser nobody used for this long is stopped, ms (default 600000 = 10 minutes). */
      idleTimeoutMs: z.number().int().min(1_000).max(86_400_000).default(DEFAULT_BROWSER_IDLE_TIMEOUT_MS),
      /** The Chromium or Chrome executable (default /usr/bin/chromium). */
      executablePath: z.string().min(1, 'must not be empty').default(DEFAULT_BROWSER_EXECUTABLE),
      /** Run the browser without a window (default true; the web UI shows its screenshots). */
      headless: z.boolean().default(true),
    })
    .prefault({}),
  /** Platform mode: users, sign-in, roles (see `platform-settings.ts`, docs/platform.md). */
  platform: PlatformSettingsSchema.default(DEFAULT_PLATFORM_SETTINGS),
  /** Web Push and webhooks (see `notification-settings.ts`, docs/notifications.md). */
  notifications: NotificationSettingsSchema.default(DEFAULT_NOTIFICATION_SETTINGS),
});
/** The whole `server.yaml`. */
export type ServerSettings = z.infer<typeof ServerSettingsSchema>;
