// What a backup or a restore tells of its progress as it goes; `sitebiz backup` and `restore`
// show it on stderr (src/cli/progress.ts).
export interface Progress {
  /** `done` of `total` units (pages, rows); `detail` names where it stands (a table). */
  update(done: number, total: number, detail?: string): void;
}
