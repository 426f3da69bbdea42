// The mailer: SMTP through nodemailer to a real SMTP server, a refused address as 422 on the field, a
// server away or deferring as 503, and the development
// fallback that logs each message as one structured line.
import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { ServiceUnavailableError, ValidationError } from '../../control-plane/core/errors.ts';
import { createLogMailer, createMailer } from '../../control-plane/mail/mailer.ts';
import { startTestSmtp } from '../support/smtp.ts';

const message = { to: 'grace@example.com', subject: 'Hello from Kiln', text: `A line long enough to be wrapped by the encoder: ${'x'.repeat(120)}\nhttps://kiln.example/invite/invite_abc` };

test('with SMTP_URL, messages go over SMTP from MAIL_FROM', async (t) => {
  const smtp = await startTestSmtp();
  t.teardown(() => smtp.close());
  const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: 'Kiln <no-reply@kiln.test>' }, pino({ level: 'silent' }));
  await mailer.send(message);
  t.is(smtp.messages.length, 1);
  t.like(smtp.messages[0], { from: 'no-reply@kiln.test', to: ['grace@example.com'], subject: 'Hello from Kiln' });
  t.is(smtp.messages[0]!.text.trimEnd(), message.text.replace(/\n/g, '\r\n'));
});

test('an address the server refuses for good is the caller\'s input at fault: 422 naming the email field', async (t) => {
  const smtp = await startTestSmtp();
  t.teardown(() => smtp.close());
  const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: 'Kiln <no-reply@kiln.test>' }, pino({ level: 'silent' }));
  const refused = await t.throwsAsync(mailer.send({ ...message, to: 'nobody@rejected.test' }), { instanceOf: ValidationError });
  t.deepEqual(refused.details, { fields: [{ field: 'email', message: 'the mail server refused this address (550 mailbox unavailable)' }] });
  t.is(smtp.messages.length, 0);
});

test('a server that defers the address or cannot be reached is a 503: try again later', async (t) => {
  const smtp = await startTestSmtp();
  const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: 'Kiln <no-reply@kiln.test>' }, pino({ level: 'silent' }));
  await t.throwsAsync(mailer.send({ ...message, to: 'later@deferred.test' }), { instanceOf: ServiceUnavailableError });
  await smtp.close();
  await t.throwsAsync(mailer.send(message), { instanceOf: ServiceUnavailableError });
});

test('without SMTP_URL, each message is one structured log line', async (t) => {
  const lines: string[] = [];
  const log = pino(new Writable({ write(chunk: Buffer, _encoding, callback) { lines.push(chunk.toString()); callback(); } }));
  await createLogMailer(log).send(message);
  t.is(lines.length, 1);
  const line = JSON.parse(lines[0]!);
  t.deepEqual(line.mail, message);
  t.regex(line.msg, /SMTP_URL unset/);
});
