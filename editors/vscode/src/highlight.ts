/**
 * Cheap syntax colouring for the chat's diffs and code blocks: one line at a time,
 * comments, strings, numbers and a language's keywords, nothing more (no grammar, no
 * state across lines). Escapes everything it does not wrap. Pure (no DOM).
 */

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

interface Lang {
  comment: RegExp | null;
  keywords: Set<string>;
}

const words = (s: string): Set<string> => new Set(s.split(/\s+/).filter(Boolean));

const C_LIKE =
  'break case catch class const continue default delete do else enum export extends false finally for function if import in instanceof interface let new null return static super switch this throw true try type typeof undefined var void while with yield async await of as from implements private protected public readonly abstract declare namespace package struct fn impl pub use mod match loop mut self Self trait where go func defer chan map range select int char long float double bool boolean string';
const LANGS: Record<string, Lang> = {
  python: {
    comment: /#.*/y,
    keywords: words(
      'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield self',
    ),
  },
  shell: { comment: /#.*/y, keywords: words('if then else elif fi for in do done while until case esac function return export local echo cd exit') },
  c: { comment: /\/\/.*/y, keywords: words(C_LIKE) },
  ruby: { comment: /#.*/y, keywords: words('def end if elsif else unless while until do return class module require nil true false self yield begin rescue ensure') },
  yaml: { comment: /#.*/y, keywords: words('true false null yes no') },
  plain: { comment: null, keywords: new Set() },
};

const EXT: Record<string, string> = {
  py: 'python',
  pyi: 'python',
  python: 'python',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  shell: 'shell',
  console: 'shell',
  rb: 'ruby',
  ruby: 'ruby',
  yml: 'yaml',
  yaml: 'yaml',
  toml: 'yaml',
  js: 'c',
  jsx: 'c',
  mjs: 'c',
  cjs: 'c',
  ts: 'c',
  tsx: 'c',
  javascript: 'c',
  typescript: 'c',
  json: 'c',
  c: 'c',
  h: 'c',
  cc: 'c',
  cpp: 'c',
  hpp: 'c',
  java: 'c',
  kt: 'c',
  go: 'c',
  rs: 'c',
  rust: 'c',
  cs: 'c',
  swift: 'c',
  php: 'c',
  lua: 'plain',
};

/** The language of a file name (`app.py`) or a code fence's tag (`python`), or null. */
export function languageOf(nameOrTag: string): string | null {
  const tag = nameOrTag.toLowerCase();
  const ext = tag.includes('.') ? tag.slice(tag.lastIndexOf('.') + 1) : tag;
  return EXT[ext] ?? null;
}

const STRING = /("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?)/y;
const NUMBER = /\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b/iy;
const WORD = /[A-Za-z_$][\w$]*/y;

/** One line of code as HTML, coloured when `lang` is known (else only escaped). */
export function highlightLine(line: string, lang: string | null): string {
  const spec = lang ? LANGS[lang] : undefined;
  if (!spec || spec === LANGS.plain || line.length > 2000) return escapeHtml(line);
  let out = '';
  let plain = '';
  const flush = (): void => {
    out += escapeHtml(plain);
    plain = '';
  };
  const wrap = (cls: string, text: string): void => {
    flush();
    out += `<span class="tok-${cls}">${escapeHtml(text)}</span>`;
  };
  let i = 0;
  while (i < line.length) {
    const at = (re: RegExp): string | null => {
      re.lastIndex = i;
      const m = re.exec(line);
      return m && m.index === i && m[0] ? m[0] : null;
    };
    const comment = spec.comment ? at(spec.comment) : null;
    if (comment) {
      wrap('comment', comment);
      break;
    }
    const str = at(STRING);
    if (str) {
      wrap('string', str);
      i += str.length;
      continue;
    }
    const word = at(WORD);
    if (word) {
      if (spec.keywords.has(word)) wrap('keyword', word);
      else plain += word;
      i += word.length;
      continue;
    }
    const num = at(NUMBER);
    if (num) {
      wrap('number', num);
      i += num.length;
      continue;
    }
    plain += line[i++];
  }
  flush();
  return out;
}

/** Several lines (a code block), coloured line by line. */
export function highlight(text: string, lang: string | null): string {
  return text
    .split('\n')
    .map((l) => highlightLine(l, lang))
    .join('\n');
}
