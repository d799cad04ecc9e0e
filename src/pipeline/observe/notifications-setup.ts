/**
 * Builds the notifier a pipeline run uses from floe's configuration: always the log sink, plus the
 * webhook sink when `notifications.webhook` is configured, plus any sinks the caller adds (the demo
 * adds a recording sink to wait for phase switches).
 */
import type { FloeConfig } from '../../config/schema.js';
import type { Logger } from './logger.js';
import { FanOutNotifier, LogSink, type NotificationSink, type Notifier } from './notifications.js';
import { WebhookSink, type WebhookOptions } from './notifications-webhook.js';

export function createNotifier(
  config: Pick<FloeConfig, 'job' | 'notifications'>,
  logger: Logger,
  options: { extraSinks?: NotificationSink[]; webhook?: Partial<WebhookOptions> } = {},
): Notifier {
  const sinks: NotificationSink[] = [new LogSink(logger)];
  const webhook = config.notifications.webhook;
  if (webhook) sinks.push(new WebhookSink({ ...options.webhook, url: webhook.url, headers: webhook.headers }, logger));
  sinks.push(...(options.extraSinks ?? []));
  return new FanOutNotifier(config.job.id, sinks, logger);
}
