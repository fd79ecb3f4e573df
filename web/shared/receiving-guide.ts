/**
 * The code of `docs/receiving-webhooks.md` (section 9): the portal bundles the guide as text and shows its own
 * TypeScript and Python receivers, never a copy that could drift from it.
 */

/** The first fenced block of `language` after the heading that starts with `heading`, or '' if the guide has none. */
export const guideSnippet = (guide: string, heading: string, language: string): string => {
  const start = guide.indexOf(`\n### ${heading}`);
  if (start < 0) return '';
  const fence = guide.indexOf(`\n\`\`\`${language}\n`, start);
  if (fence < 0) return '';
  const from = fence + language.length + 5;
  const end = guide.indexOf('\n```', from);
  return end < 0 ? '' : guide.slice(from, end);
};
