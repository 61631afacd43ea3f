/**
 * A tiny, safe Markdown renderer for the chat transcript. All text is
 * HTML-escaped first; only the markup below is produced: fenced code, headings,
 * lists, quotes, paragraphs, `code`, **bold**, *italic*, and links whose target
 * is http(s), file or a relative path (anything else is left as text).
 */
import { highlight, languageOf } from './highlight';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function safeHref(url: string): string | null {
  const u = url.trim();
  if (/^(https?:|file:)/i.test(u)) return u;
  if (/^[a-z][a-z0-9+.-]*:/i.test(u)) return null; // javascript:, data:, command:, ...
  return u;
}

/** Inline markup on one line of raw (unescaped) text. */
export function renderInline(text: string): string {
  const parts = text.split(/(`+[^`]*`+)/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return `<code>${escapeHtml(part.replace(/^`+|`+$/g, ''))}</code>`;
      let out = escapeHtml(part);
      out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label: string, href: string) => {
        const raw = href.replace(/&amp;/g, '&');
        const safe = safeHref(raw);
        return safe === null ? whole : `<a href="${escapeHtml(safe)}">${label}</a>`;
      });
      out = out.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
      out = out.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, '$1<em>$2</em>');
      out = out.replace(/(^|[^_\w])_([^_\s][^_]*)_(?!\w)/g, '$1<em>$2</em>');
      return out;
    })
    .join('');
}

/**
 * A fenced code block: the code, coloured when its language is known, under a bar with
 * **Copy** and **Insert** (at the cursor of the editor); the chat's script finds the code
 * from the button (`data-code-action`) and the extension does the rest.
 */
export function codeBlock(code: string, tag: string): string {
  const cls = tag ? ` class="language-${escapeHtml(tag)}"` : '';
  const label = tag ? `<span class="code-lang">${escapeHtml(tag)}</span>` : '<span class="code-lang"></span>';
  const tools =
    `<div class="code-tools">${label}` +
    '<button class="code-action" data-code-action="copy" title="Copy the code">Copy</button>' +
    '<button class="code-action" data-code-action="insert" title="Insert the code at the cursor of the editor">Insert</button></div>';
  return `<div class="code-block">${tools}<pre><code${cls}>${highlight(code, languageOf(tag))}</code></pre></div>`;
}

export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const html: string[] = [];
  let para: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;

  const flushPara = (): void => {
    if (para.length) html.push(`<p>${para.map(renderInline).join('<br>')}</p>`);
    para = [];
  };
  const flushList = (): void => {
    if (list) html.push(`<${list.tag}>${list.items.map((i) => `<li>${renderInline(i)}</li>`).join('')}</${list.tag}>`);
    list = null;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(```+|~~~+)\s*([\w+#.-]*)/.exec(line);
    if (fence) {
      flushPara();
      flushList();
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      html.push(codeBlock(body.join('\n'), fence[2]));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const ordered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (!line.trim()) {
      flushPara();
      flushList();
    } else if (heading) {
      flushPara();
      flushList();
      const n = heading[1].length;
      html.push(`<h${n}>${renderInline(heading[2])}</h${n}>`);
    } else if (bullet || ordered) {
      flushPara();
      const tag = bullet ? 'ul' : 'ol';
      if (list && list.tag !== tag) flushList();
      list ??= { tag, items: [] };
      list.items.push((bullet ?? ordered)![1]);
    } else if (quote) {
      flushPara();
      flushList();
      html.push(`<blockquote>${renderInline(quote[1])}</blockquote>`);
    } else if (list && /^\s{2,}/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`;
    } else {
      flushList();
      para.push(line);
    }
  }
  flushPara();
  flushList();
  return html.join('\n');
}
