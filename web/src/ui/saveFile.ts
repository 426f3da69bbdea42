/**
 * Hands a file fetched through `api` (with the session's bearer, which a plain link cannot carry) to the
 * browser as a download: `saveFile(await ok(api.GET(url, { parseAs: 'blob' })), 'report.csv')`.
 */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started the download by now; the object URL is freed a while later, not at once.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
