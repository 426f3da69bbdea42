// Where a Pulumi diy state backend keeps its files (Go: pkg backend/diy, a go-cloud "bucket"): by path under the
// backend's root (`.pulumi/meta.yaml`, `.pulumi/stacks/<project>/<stack>.json`, `.pulumi/locks/...`), in a
// folder (`file://`, state-folder.ts) or in rows of a PostgreSQL table (`postgres://`, state-table.ts).

/** A diy backend's files (text, or a compressed state's bytes), each read and replaced whole. */
export interface StateFiles {
  /** The file's contents; undefined when there is none. */
  read(path: string): Promise<Buffer | undefined>;
  exists(path: string): Promise<boolean>;
  /** Replaces the file whole, as one write: a reader sees the old contents or the new. */
  write(path: string, contents: string | Buffer): Promise<void>;
  /** The paths of the files under a folder (`.pulumi/locks/`), at any depth. */
  list(folder: string): Promise<string[]>;
  remove(paths: readonly string[]): Promise<void>;
}
