/**
 * The discovered model catalog (`models/list` with discovery; SPEC §9 "Model catalog"):
 * the models each provider lists at its OpenAI-style endpoint (`GET <baseURL>/models`,
 * OpenAI API reference "List models"), merged with the configured ones, cached per scope for
 * a time-to-live, shorter when discovery had warnings (an unreachable provider is asked again
 * soon). Concurrent requests for one scope share one discovery; `refresh` starts a new one.
 */
import type { ModelInfo } from '../protocol/index.js';
import { describeModel } from './model-catalog.js';
import type { ModelRegistry } from './model-registry.js';

/** Time a clean discovery stays cached, ms (10 minutes). */
export const DISCOVERY_TTL_MS = 10 * 60_000;
/** Time a discovery with warnings stays cached, ms (30 seconds). */
export const DISCOVERY_WARNING_TTL_MS = 30_000;
/** Time one provider's model list may take, ms. */
export const DISCOVERY_TIMEOUT_MS = 5_000;

/** A discovered catalog. */
export interface DiscoveredCatalog {
  /** Configured models first (in their order), then discovered ones not configured, by id. */
  models: ModelInfo[];
  /** One line per provider whose list could not be read (the configured models still show). */
  warnings: string[];
  /** When the discovery ran, ms since the epoch. */
  discoveredAt: number;
}

interface CacheEntry {
  registry: ModelRegistry;
  expiresAt: number;
  catalog: Promise<DiscoveredCatalog>;
}

/** Options of {@link ModelDiscovery}. */
export interface ModelDiscoveryOptions {
  ttlMs?: number;
  warningTtlMs?: number;
  timeoutMs?: number;
  /** The HTTP client (default: global `fetch`). */
  fetch?: typeof fetch;
  now?: () => number;
}

/** Discovers and caches the model catalog. */
export class ModelDiscovery {
  private readonly cache = new Map<string, CacheEntry>();
  /** Discoveries run so far (for tests and diagnostics). */
  discoveries = 0;

  /** @param registry the model registry in force (read at each discovery; a new one starts a new cache entry) */
  constructor(
    private readonly registry: () => ModelRegistry,
    private readonly options: ModelDiscoveryOptions = {},
  ) {}

  /**
   * The catalog of a scope: cached while fresh and made with the same registry; otherwise
   * discovered now (once for all callers asking meanwhile).
   * @param scope the cache key (e.g. `server`, or a project id once providers are per project)
   * @param refresh discover again even when the cached catalog is fresh
   */
  catalog(scope: string, refresh = false): Promise<DiscoveredCatalog> {
    const now = (this.options.now ?? Date.now)();
    const registry = this.registry();
    const cached = this.cache.get(scope);
    if (cached && !refresh && cached.registry === registry && cached.expiresAt > now) return cached.catalog;
    // A discovery already running for this scope and registry is shared, even by a refresh.
    if (cached && cached.registry === registry && cached.expiresAt === Number.POSITIVE_INFINITY) return cached.catalog;
    const entry: CacheEntry = { registry, expiresAt: Number.POSITIVE_INFINITY, catalog: this.discover(registry) };
    this.cache.set(scope, entry);
    entry.catalog.then(
      (catalog) => {
        entry.expiresAt = catalog.discoveredAt + (catalog.warnings.length > 0 ? (this.options.warningTtlMs ?? DISCOVERY_WARNING_TTL_MS) : (this.options.ttlMs ?? DISCOVERY_TTL_MS));
      },
      () => {
        if (this.cache.get(scope) === entry) this.cache.delete(scope);
      },
    );
    return entry.catalog;
  }

  private async discover(registry: ModelRegistry): Promise<DiscoveredCatalog> {
    this.discoveries++;
    const configured = registry.list();
    const known = new Set(configured.map((model) => model.id));
    const warnings: string[] = [];
    const discovered: ModelInfo[] = [];
    await Promise.all(
      registry.discoveryEndpoints().map(async (endpoint) => {
        if (endpoint.keyError !== undefined) {
          warnings.push(`provider "${endpoint.provider}": models not listed: ${endpoint.keyError}`);
          return;
        }
        try {
          for (const modelId of await this.listProviderModels(endpoint.baseURL, endpoint.apiKey)) {
            const id = `${endpoint.provider}/${modelId}`;
            if (known.has(id)) continue;
            known.add(id);
            discovered.push(describeModel(endpoint.provider, endpoint.kind, modelId));
          }
        } catch (error) {
          warnings.push(`provider "${endpoint.provider}": GET ${endpoint.baseURL}/models failed: ${(error as Error).message}`);
        }
      }),
    );
    discovered.sort((a, b) => a.id.localeCompare(b.id));
    return { models: [...configured, ...discovered], warnings: warnings.sort(), discoveredAt: (this.options.now ?? Date.now)() };
  }

  /** The model ids of an OpenAI-style `GET /models` answer (`{ data: [{ id }] }`). */
  private async listProviderModels(baseURL: string, apiKey: string | undefined): Promise<string[]> {
    const response = await (this.options.fetch ?? fetch)(`${baseURL}/models`, {
      headers: apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(this.options.timeoutMs ?? DISCOVERY_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const body = (await response.json()) as { data?: unknown };
    if (!Array.isArray(body.data)) throw new Error('the answer has no "data" list');
    return body.data.flatMap((entry) => (typeof entry === 'object' && entry !== null && typeof (entry as { id?: unknown }).id === 'string' ? [(entry as { id: string }).id] : []));
  }
}
