// A ready report's CSV, read back from its report_chunk rows (reports/report.entity.ts) one chunk per query:
// whichever worker wrote it, any API replica serves it, holding one chunk at a time however large it is.
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';

const CHUNK_SQL = 'SELECT data FROM report_chunk WHERE report_id = ? AND sequence = ?';

export async function reportContent(em: EntityManager, reportId: string): Promise<Readable> {
  const read = async (sequence: number) => (await em.execute<Array<{ data: Buffer }>>(CHUNK_SQL, [reportId, sequence]))[0]?.data;
  // Read before answering: a database failure now is still an error response rather than a cut-off download.
  const first = await read(0);
  async function* chunks() {
    let chunk = first;
    for (let sequence = 1; chunk; sequence++) {
      yield chunk;
      chunk = await read(sequence);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
