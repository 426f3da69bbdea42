// An invoice as a one-page PDF (more pages when the lines run on), drawn with pdfkit's built-in Helvetica:
// no font file travels with Kiln. Money is printed from integer cents.
import type { InvoiceBody } from './schemas.ts';

export interface PrintedInvoice {
  readonly invoice: InvoiceBody;
  readonly organizationName: string;
}

const MARGIN = 50;
/** Column x positions and widths of the line table (A4 is 595 points wide). */
const COLUMNS = [
  { title: 'Deployment', x: MARGIN, width: 170, align: 'left' },
  { title: 'GPU type', x: 225, width: 100, align: 'left' },
  { title: 'GPU-hours', x: 330, width: 70, align: 'right' },
  { title: 'Rate / GPU-hour', x: 405, width: 75, align: 'right' },
  { title: 'Amount', x: 485, width: 60, align: 'right' },
] as const;

/** $1,234.56 from cents. */
export function formatCents(cents: number, currency = 'usd'): string {
  const sign = cents < 0 ? '-' : '';
  const whole = Math.floor(Math.abs(cents) / 100).toLocaleString('en-US');
  const symbol = currency === 'usd' ? '$' : `${currency.toUpperCase()} `;
  return `${sign}${symbol}${whole}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
}

const day = (iso: string) => iso.slice(0, 10);

export async function renderInvoicePdf({ invoice, organizationName }: PrintedInvoice): Promise<Buffer> {
  // Loaded here, on the first invoice asked for as a PDF (control-plane/core/load-on-first-use.ts says why).
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: `Invoice ${invoice.number}`, Author: 'Kiln', CreationDate: new Date(invoice.issuedAt) } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (cents: number) => formatCents(cents, invoice.currency);
  const right = doc.page.width - MARGIN;

  doc.font('Helvetica-Bold').fontSize(24).text('Kiln', MARGIN, MARGIN);
  doc.font('Helvetica').fontSize(10).fillColor('#555555').text('GPU inference deployments', MARGIN, MARGIN + 28);
  doc.font('Helvetica-Bold').fontSize(16).fillColor('#000000').text('Invoice', MARGIN, MARGIN, { width: right - MARGIN, align: 'right' });
  doc.font('Helvetica').fontSize(10).text(invoice.number, MARGIN, MARGIN + 22, { width: right - MARGIN, align: 'right' });

  let y = MARGIN + 70;
  const field = (label: string, value: string) => {
    doc.font('Helvetica-Bold').text(label, MARGIN, y, { width: 110 });
    doc.font('Helvetica').text(value, MARGIN + 110, y, { width: right - MARGIN - 110 });
    y = doc.y + 4;
  };
  field('Billed to', organizationName);
  field('Period', `${day(invoice.periodStart)} to ${day(new Date(Date.parse(invoice.periodEnd) - 1).toISOString())} (UTC)`);
  field('Issued', day(invoice.issuedAt));
  field('Plan', invoice.plan);

  y += 16;
  const rule = (at: number) => doc.moveTo(MARGIN, at).lineTo(right, at).lineWidth(0.5).strokeColor('#999999').stroke();
  const row = (cells: readonly string[], bold = false) => {
    if (y > doc.page.height - MARGIN - 120) {
      doc.addPage();
      y = MARGIN;
    }
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9);
    let height = 0;
    COLUMNS.forEach((column, i) => {
      doc.text(cells[i] ?? '', column.x, y, { width: column.width, align: column.align });
      height = Math.max(height, doc.y - y);
    });
    y += height + 5;
  };
  row(COLUMNS.map((c) => c.title), true);
  rule(y - 2);
  y += 3;
  if (invoice.lines.length === 0) row(['No GPU usage this period', '', '', '', '']);
  for (const line of invoice.lines) {
    row([line.deploymentName, line.gpu, (line.gpuMs / 3_600_000).toFixed(3), money(line.rateCentsPerGpuHour), money(line.amountCents)]);
  }
  rule(y);
  y += 10;

  const total = (label: string, value: string, bold = false) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(bold ? 11 : 10);
    doc.text(label, 300, y, { width: 170, align: 'right' });
    doc.text(value, 475, y, { width: right - 475, align: 'right' });
    y = doc.y + 6;
  };
  total('GPU usage', money(invoice.usageCents));
  total(`Plan fee (${invoice.plan})`, money(invoice.planFeeCents));
  total('Credits applied', money(-invoice.creditsAppliedCents));
  total(`Total (${invoice.currency.toUpperCase()})`, money(invoice.totalCents), true);

  doc.end();
  return done;
}
