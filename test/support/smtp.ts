// A real SMTP server (smtp-server) for tests: records every message it accepts, refuses recipients at
// `rejected.test` for good (550) and defers those at `deferred.test` (451), so tests can see what Kiln mails
// and what happens when mail cannot be sent.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createSmtpMailer } from '../../control-plane/mail/mailer.ts';
import { startTestApi, type TestApi, type TestApiOverrides } from './control-plane.ts';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The decoded text body. */
  text: string;
}

export interface TestSmtp {
  readonly url: string;
  readonly messages: ReceivedMail[];
  /** The messages sent to one address so far. */
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@rejected.test')) callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      else if (address.address.endsWith('@deferred.test')) callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
        const body = raw.slice(split + 4);
        const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(headers)?.[1] ?? '';
        const quotedPrintable = /quoted-printable/i.test(header('Content-Transfer-Encoding'));
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: header('Subject'),
          text: quotedPrintable ? decodeQuotedPrintable(body) : body,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) => messages.filter((m) => m.to.includes(address)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A test API for one test file that mails through a test SMTP server of its own (links in messages start at
 * https://kiln.example); `close` stops both.
 */
export async function startMailingApi(filename: string, overrides: TestApiOverrides = {}): Promise<{ api: TestApi; smtp: TestSmtp; close(): Promise<void> }> {
  const smtp = await startTestSmtp();
  const api = await startTestApi(filename, {
    ...overrides,
    mail: { mailer: createSmtpMailer({ url: smtp.url, from: 'Kiln <no-reply@kiln.test>' }), publicUrl: 'https://kiln.example' },
  });
  return { api, smtp, close: async () => { await api.close(); await smtp.close(); } };
}

/** The accept link of an invitation mailed by an API from startMailingApi, its token captured. */
export const INVITATION_LINK = /https:\/\/kiln\.example\/invite\/(invite_[A-Za-z0-9_-]{43})/;

/** Invites `email` as the holder of `token`, and reads the invitation's token from the message `smtp` received. */
export async function inviteByMail(api: TestApi, smtp: TestSmtp, token: string, email: string, role = 'member') {
  const sent = smtp.to(email).length;
  const res = await api.request('POST', '/v1/team/invite', { token, body: { email, role } });
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${JSON.stringify(res.body)}`);
  const mail = smtp.to(email)[sent];
  if (!mail) throw new Error(`no mail to ${email}`);
  return { invitation: res.body, token: INVITATION_LINK.exec(mail.text)![1]!, mail };
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}
