import { ConsoleLogger, INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import pino, { DestinationStream, Logger as PinoLogger } from 'pino';
import { currentApp, loggedContext, runInAppScope } from './log-context';

/** Nest's level names, as LOG_LEVEL spells them. */
export type AppLogLevel = 'error' | 'warn' | 'log' | 'debug' | 'verbose';
/** `json`: one JSON object a line; `text`: Nest's coloured lines; `auto`: text on a terminal, JSON otherwise. */
export type LogFormat = 'auto' | 'json' | 'text';

export interface AppLoggerOptions {
  /** `edge`, `admin-api`, `worker`: the `app` field of every line. */
  app: string;
  level: AppLogLevel;
  format: LogFormat;
  /** Where JSON lines go (stdout unless given). */
  destination?: DestinationStream;
}

const NEST_LEVELS: AppLogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];
const PINO_LEVEL: Record<AppLogLevel, pino.Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/** Nest's levels up to and including `level`. */
export function logLevelsUpTo(level: AppLogLevel): LogLevel[] {
  return NEST_LEVELS.slice(0, NEST_LEVELS.indexOf(level) + 1);
}

/** The process's logger: JSON lines through pino, or Nest's coloured text where a person reads a terminal. */
export function createAppLogger(options: AppLoggerOptions): LoggerService {
  const json = options.format === 'json' || (options.format === 'auto' && !process.stdout.isTTY);
  if (!json) {
    const text = new ConsoleLogger();
    text.setLogLevels(logLevelsUpTo(options.level));
    return text;
  }
  return new JsonLogger(options);
}

/**
 * Creates an app (`create`, given the app's logger) whose log lines name it, `options.app`, also
 * when other apps share the process. Nest keeps one logger per process (NestFactory.create's
 * `logger` replaces its static one), so the last app created would name every line: the name
 * comes from the app's scope instead (runInAppScope), entered for its creation, init, listen and
 * close, and kept by every request and job it serves (one scope per request, as before).
 */
export async function createNamedApp<A extends INestApplication>(
  options: AppLoggerOptions,
  create: (logger: LoggerService) => Promise<A>,
): Promise<A> {
  const app = await runInAppScope(options.app, () => create(createAppLogger(options)));
  // Nest's own proxy around the app ignores assignments, so its lifecycle methods are wrapped here.
  const named: A = new Proxy(app, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== 'function' || !APP_SCOPED_METHODS.has(prop)) return value;
      return (...args: unknown[]) =>
        runInAppScope(options.app, async () => {
          const result: unknown = await value.apply(target, args);
          // init() answers the app: this one, so what is started through it later is named too.
          return prop === 'init' ? named : result;
        });
    },
  });
  return named;
}

/** What an app starts from: its modules' init hooks, its HTTP server, its shutdown hooks. */
const APP_SCOPED_METHODS: ReadonlySet<string | symbol> = new Set(['init', 'listen', 'close']);

/**
 * A Nest LoggerService over pino: `time`, `level` (a name), `app` (the scope's, runInAppScope, else
 * this logger's), `context` (the Nest logger's name), `msg`, and the request's ids (request, call,
 * org, key) from the log context. Never headers or bodies: callers log what they mean to, and no
 * secret is ever one of them.
 */
export class JsonLogger implements LoggerService {
  private readonly pino: PinoLogger;

  constructor(options: AppLoggerOptions) {
    this.pino = pino(
      {
        level: PINO_LEVEL[options.level],
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        mixin: () => ({ app: currentApp() ?? options.app, ...loggedContext() }),
      },
      // process.stdout, not a file descriptor of pino's own: on Linux it writes synchronously to a
      // file, pipe or terminal, and whatever reads this process's stdout in-process (a test that
      // checks no secret is logged) sees every line.
      options.destination ?? process.stdout,
    );
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    // Nest passes (message, stack, context); a lone second argument that is not a stack is the context.
    const [stackOrContext, context] = params;
    if (params.length >= 2 || (typeof stackOrContext === 'string' && stackOrContext.includes('\n    at '))) {
      this.write('error', message, context === undefined ? [] : [context], stackOrContext);
    } else this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: pino.Level, message: unknown, params: unknown[], stack?: unknown): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const context = typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (typeof stack === 'string' && stack) fields.stack = stack;
    if (message instanceof Error) {
      fields.err = { type: message.name, message: message.message, stack: message.stack };
      this.pino[level](fields, message.message);
    } else if (typeof message === 'object' && message !== null) {
      // A structured line (the access log): its fields sit beside the standard ones.
      const { msg, ...rest } = message as Record<string, unknown>;
      this.pino[level]({ ...rest, ...fields }, typeof msg === 'string' ? msg : '');
    } else this.pino[level](fields, String(message));
  }
}
