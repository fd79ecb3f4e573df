/** A document that cannot be exported or a manifest that cannot be built from what was found. */
export class ExportFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportFormatError';
  }
}
