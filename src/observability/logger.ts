import { type Logger as PinoLogger, pino } from 'pino';

export type Logger = PinoLogger;

/**
 * Paths pino blanks out wherever they appear in a log object. Keys and Authorization headers must never reach a log
 * line, even when someone logs a whole request or error object by mistake.
 */
const redactedPaths = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.headers.authorization',
  'x-api-key',
  '*.x-api-key',
  '*.headers["x-api-key"]',
  'cookie',
  '*.cookie',
  '*.headers.cookie',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'switchboard' },
      redact: { paths: redactedPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? process.stdout,
  );
}
