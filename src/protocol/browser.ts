/**
 * The agent's browser, for clients (docs/browser.md, docs/protocol.md "The agent's browser"):
 * the Chromium of a conversation's working directory, which the agent drives through the MCP
 * server `browser`. `browser/state` says whether it runs and what it shows, `browser/screenshot`
 * captures its page, `browser/input` lets a person take over (navigate, click, type, press a
 * key) and `browser/stop` stops it. Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';

const conversationIdParam = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });

/** Longest URL `browser/input` navigates to, characters. */
export const BROWSER_MAX_URL_LENGTH = 8_192;
/** Longest text one `browser/input` types, characters. */
export const BROWSER_MAX_TEXT_LENGTH = 10_000;

/**
 * Keys `browser/input` `key` presses: named keys of the UI Events KeyboardEvent key values
 * (https://www.w3.org/TR/uievents-key/); printable characters are typed with `type`.
 */
export const BROWSER_KEYS = ['Enter', 'Tab', 'Escape', 'Backspace', 'Delete', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown', 'Space'] as const;

/** What the browser shows, as `browser/state` and `browser/input` report it. */
export const BrowserStateSchema = z.object({
  /** True when the server offers the browser to this conversation (`server.yaml` `browser.enabled`, local executor, not sandboxed). */
  enabled: z.boolean(),
  /** True while Chromium runs. */
  running: z.boolean(),
  /** The URL of the page it shows (while running). */
  url: z.string().optional(),
  /** The title of that page (while running). */
  title: z.string().optional(),
  /** Where its profile is kept (absolute path on the server's machine; present when enabled). */
  profileDirectory: z.string().optional(),
});
/** What the browser shows. */
export type BrowserState = z.infer<typeof BrowserStateSchema>;

/** One take-over action of `browser/input`. */
export const BrowserInputActionSchema = z.discriminatedUnion(
  'kind',
  [
    /** Load a URL (`http:`, `https:` or `about:blank`) in the current page. */
    z.object({
      kind: z.literal('navigate'),
      url: z
        .string()
        .max(BROWSER_MAX_URL_LENGTH)
        .refine((value) => value === 'about:blank' || /^https?:\/\/[^\s]+$/i.test(value), { message: 'expected an http:// or https:// URL (or about:blank)' }),
    }),
    /** A left click at a point of the page's viewport, in CSS pixels from its top left corner (as in the screenshot). */
    z.object({ kind: z.literal('click'), x: z.number().min(0).max(100_000), y: z.number().min(0).max(100_000) }),
    /** Text typed into the focused element. */
    z.object({ kind: z.literal('type'), text: z.string().min(1, 'must not be empty').max(BROWSER_MAX_TEXT_LENGTH) }),
    /** One named key pressed and released. */
    z.object({ kind: z.literal('key'), key: z.enum(BROWSER_KEYS) }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? 'expected kind: navigate, click, type or key' : undefined) },
);
/** One take-over action. */
export type BrowserInputAction = z.infer<typeof BrowserInputActionSchema>;

/** Request methods of the agent's browser: name → params and result schemas. */
export const browserMethods = {
  /** Whether the conversation's browser is offered and runs, and the URL and title of its page. Starts nothing. */
  'browser/state': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object(BrowserStateSchema.shape),
  },
  /**
   * A PNG screenshot of the page the browser shows (its viewport). Counts as use (the idle time
   * starts again). Refused with conflict `browser_not_running` when it is stopped.
   */
  'browser/screenshot': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({
      /** Always `image/png`. */
      mediaType: z.literal('image/png'),
      /** The image, base64. */
      data: z.string(),
      /** Size of the viewport in CSS pixels (click coordinates are in these units). */
      width: z.number(),
      height: z.number(),
      url: z.string(),
      title: z.string(),
    }),
  },
  /**
   * A person takes over: one action on the page the browser shows, as if typed or clicked in
   * it. Starts the browser when it is stopped. Answers once the action was dispatched (a
   * navigation: once the page loaded, or after 10 s).
   */
  'browser/input': {
    params: z.object({ conversationId: conversationIdParam, action: BrowserInputActionSchema }),
    result: z.object(BrowserStateSchema.shape),
  },
  /** Stops the conversation's browser; its profile is kept. The agent's next browser tool call starts it again. */
  'browser/stop': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({
      /** False when it was not running. */
      stopped: z.boolean(),
    }),
  },
} as const;
