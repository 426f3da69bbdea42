// Outgoing e-mail (invitations, address confirmations) behind one interface: SMTP through nodemailer when
// SMTP_URL is set, otherwise (development only, config.ts enforces it) one structured log line per message.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../core/errors.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** `url`: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...:465` (TLS from the start). */
export function createSmtpMailer(options: { url: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(options.url);
  return {
    async send(message) {
      await transport.sendMail({ from: options.from, ...message }).catch((error: unknown) => {
        // Callers send inside their transaction: a 503 rolls back what the message was about.
        throw Object.assign(new ServiceUnavailableError('Could not send e-mail; nothing was changed, try again later'), { cause: error });
      });
    },
  };
}

/** Development without SMTP: the message (links included) is logged so a developer can follow it. */
export function createLogMailer(log: Logger): Mailer {
  return {
    send(message) {
      log.info({ mail: message }, 'mail not sent (SMTP_URL unset): logged instead');
      return Promise.resolve();
    },
  };
}

export function createMailer(config: { smtpUrl: string | undefined; mailFrom: string }, log: Logger): Mailer {
  return config.smtpUrl ? createSmtpMailer({ url: config.smtpUrl, from: config.mailFrom }) : createLogMailer(log);
}
