import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, renderMarkdown } from '../../src/markdown';
import type { Entry } from '../../src/transcript';
import { renderEntry, renderTodos, renderUsage, toolSummary, uriLabel } from '../../src/webview/render';

test('markdown escapes HTML everywhere', () => {
  const html = renderMarkdown('<script>alert(1)</script> **<b>x</b>**\n\n```html\n<img onerror=x>\n```');
  assert.ok(!html.includes('<script>'));
  assert.ok(!html.includes('<img'));
  assert.ok(html.includes('&lt;script&gt;'));
  assert.ok(html.includes('<strong>&lt;b&gt;x&lt;/b&gt;</strong>'));
  assert.equal(escapeHtml(`"'&`), '&quot;&#39;&amp;');
});

test('markdown basics: headings, lists, code, links; unsafe links stay text', () => {
  const html = renderMarkdown('# Title\n- a\n- `b<c`\n1. one\n\nSee [docs](https://x.dev/a?b=1&c=2) and [bad](javascript:alert(1)) *em*');
  assert.match(html, /<h1>Title<\/h1>/);
  assert.match(html, /<ul><li>a<\/li><li><code>b&lt;c<\/code><\/li><\/ul>/);
  assert.match(html, /<ol><li>one<\/li><\/ol>/);
  assert.match(html, /<a href="https:\/\/x.dev\/a\?b=1&amp;c=2">docs<\/a>/);
  assert.ok(!html.includes('href="javascript'));
  assert.match(html, /<em>em<\/em>/);
});

test('entries render: tool calls collapsible, edit links carry the uri, shell output escaped', () => {
  const base = { id: 1, rev: 1 };
  const tool = renderEntry({ ...base, kind: 'tool', callId: 'c', tool: 'bash', input: { command: 'ls <x>' }, output: 'out', isError: false, done: true } as Entry);
  assert.match(tool, /^<details class="entry tool done" data-tool="bash"/);
  assert.match(tool, /ls &lt;x&gt;/);
  const edit = renderEntry({ ...base, kind: 'edit', uri: 'file:///w/my%20file.py', applied: true, reason: null } as Entry);
  assert.match(edit, /data-open="file:\/\/\/w\/my%20file.py"/);
  assert.match(edit, />\/w\/my file.py</);
  const shell = renderEntry({ ...base, kind: 'shell', command: 'echo', output: '<hi>', exitCode: 1, done: true, truncated: true, timedOut: false } as Entry);
  assert.match(shell, /&lt;hi&gt;/);
  assert.match(shell, /exit 1 · output truncated/);
  assert.equal(uriLabel('untitled:Untitled-1'), 'untitled:Untitled-1');
});

test('todos and usage', () => {
  assert.equal(renderTodos([]), '');
  assert.match(renderTodos([{ content: 'a', status: 'completed' }, { content: '<b>', status: 'pending' }]), /Todos \(1\/2\).*&lt;b&gt;/);
  assert.deepEqual(renderUsage({ usedTokens: 50000, limitTokens: 200000 }), {
    percent: 25,
    title: 'Context: 50,000 of 200,000 tokens in use (25%). /context lists the parts.',
  });
  assert.equal(renderUsage(null), null);
});

test('a cancelled shell command says "cancelled", not "exit ?"; slash-command output keeps its columns', () => {
  const base = { id: 1, rev: 1 };
  const shell = renderEntry({ ...base, kind: 'shell', command: 'sleep 30', output: '', exitCode: null, done: true, truncated: false, timedOut: false, cancelled: true } as Entry);
  assert.match(shell, /class="exit bad">cancelled</);
  assert.ok(!shell.includes('exit ?'));
  const help = '/help      Show this help\n/model     Show or switch the model';
  const reply = renderEntry({ ...base, kind: 'reply', text: help, status: 'completed' } as Entry);
  assert.ok(reply.includes(`<pre class="output">${help}</pre>`), reply);
});

test('a running subagent has a Stop of its own carrying its id; a finished one does not', () => {
  const base = {
    id: 3,
    rev: 1,
    kind: 'subagent' as const,
    agentId: 'explore-1a2b3c4d',
    agent: 'explore',
    prompt: 'find <add>\nand more',
    parentCallId: 't1',
    steps: [{ callId: 'g1', tool: 'grep', input: { pattern: 'def add' }, done: false, isError: false }],
    text: '',
    tokens: 0,
  };
  const running = renderEntry({ ...base, status: 'running' } as Entry);
  assert.match(running, /data-stop-agent="explore-1a2b3c4d"/);
  assert.match(running, /class="entry subagent nested running"/);
  assert.ok(running.includes('find &lt;add&gt;') && !running.includes('and more'), running);
  assert.ok(running.includes('Searching for `def add`…'), 'its current step shows in the summary, as a sentence');
  const done = renderEntry({ ...base, status: 'completed', tokens: 12345, text: 'It is in **app.py**', steps: [{ ...base.steps[0], done: true }] } as Entry);
  assert.ok(!done.includes('data-stop-agent'), done);
  assert.ok(done.includes('>done<') && !done.includes('>completed<') && done.includes('12.3k tokens'), done);
  assert.ok(done.includes('<li class="done">Searched for `def add`</li>'), 'its steps are sentences');
  assert.ok(done.includes('<strong>app.py</strong>'), 'its answer is rendered');
  const stopping = renderEntry({ ...base, status: 'stopping' } as Entry);
  assert.ok(!stopping.includes('data-stop-agent') && stopping.includes('stopping'), stopping);
});

test("a task call reads as what it starts, not as its JSON", () => {
  assert.equal(toolSummary({ prompt: 'survey the repo' }), 'survey the repo');
  assert.equal(toolSummary({ tasks: [{ prompt: 'a' }, { prompt: 'b' }] }), '2 subagents in parallel');
  assert.equal(toolSummary({ chain: [{ prompt: 'a' }] }), 'a chain of 1 subagent');
});

test('a proposed plan renders as Markdown with Approve (and a preset), Revise and Reject; an answered one without', () => {
  const base = { id: 1, rev: 1, submissionId: 'sub"9', kind: 'plan' as const, plan: '## Plan\n\n1. **Fix** add()' };
  const waiting = renderEntry({ ...base, answer: null } as Entry);
  assert.match(waiting, /<strong>Fix<\/strong>/);
  for (const action of ['approve', 'revise', 'reject']) assert.ok(waiting.includes(`data-plan-action="${action}"`), action);
  assert.ok(waiting.includes('data-plan-sub="sub&quot;9"'), 'the submission id is escaped');
  assert.match(waiting, /<option value="auto-edit">/);
  const answered = renderEntry({ ...base, answer: 'reject' } as Entry);
  assert.ok(!answered.includes('data-plan-action') && answered.includes('rejected'));
});
