// The structure of an HCL file's source, for check_module.mjs: which keys are attributes and which are
// blocks, and how many blocks of a name there are (HCL-to-JSON loses that difference).

// Returns the body of an HCL file as {attrs: [{name, line}], blocks: [{type, labels, line, body}]}.
// Expressions are skipped, not parsed: strings (with ${...} and %{...}), heredocs, comments and
// brackets are followed only far enough to find where each attribute ends.
export function scanStructure(text) {
  let i = 0;
  let line = 1;
  const n = text.length;
  const peek = (k = 0) => text[i + k];
  const advance = () => {
    if (text[i] === '\n') line++;
    i++;
  };

  function skipComment() {
    if (peek() === '#' || (peek() === '/' && peek(1) === '/')) {
      while (i < n && peek() !== '\n') advance();
      return true;
    }
    if (peek() === '/' && peek(1) === '*') {
      advance(); advance();
      while (i < n && !(peek() === '*' && peek(1) === '/')) advance();
      advance(); advance();
      return true;
    }
    return false;
  }
  function skipSpaces(newlines) {
    for (;;) {
      if (i >= n) return;
      const c = peek();
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) advance();
      else if (!skipComment()) return;
    }
  }
  function skipString() { // at the opening quote
    advance();
    while (i < n && peek() !== '"') {
      if (peek() === '\\') { advance(); advance(); continue; }
      if ((peek() === '$' || peek() === '%') && peek(1) === '{') {
        advance(); advance();
        skipExpression('}');
        advance();
        continue;
      }
      advance();
    }
    advance();
  }
  function skipHeredoc() { // at "<<"
    const m = /^<<(-?)([A-Za-z_][A-Za-z0-9_-]*)[^\n]*\n/.exec(text.slice(i));
    if (!m) { advance(); advance(); return; }
    for (let k = 0; k < m[0].length; k++) advance();
    while (i < n) {
      const end = text.indexOf('\n', i);
      const current = text.slice(i, end < 0 ? n : end);
      const done = current.trim() === m[2];
      while (i < n && peek() !== '\n') advance();
      if (done) return;
      advance();
    }
  }
  // Skips an expression up to (not including) `closer` at depth 0, or a newline at depth 0 when
  // closer is null (an attribute's value ends at the end of its line unless brackets are open).
  function skipExpression(closer) {
    const stack = [];
    while (i < n) {
      if (skipComment()) continue;
      const c = peek();
      if (stack.length === 0 && (c === closer || (closer === null && c === '\n') || (closer === null && c === '}'))) return;
      if (c === '"') { skipString(); continue; }
      if (c === '<' && peek(1) === '<') { skipHeredoc(); continue; }
      if (c === '(' || c === '[' || c === '{') stack.push(c === '(' ? ')' : c === '[' ? ']' : '}');
      else if (c === ')' || c === ']' || c === '}') stack.pop();
      advance();
    }
  }
  function readIdent() {
    const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(text.slice(i, i + 256));
    if (!m) return null;
    for (let k = 0; k < m[0].length; k++) advance();
    return m[0];
  }
  function readLabel() {
    if (peek() === '"') {
      const start = i;
      skipString();
      return JSON.parse(text.slice(start, i));
    }
    return readIdent();
  }
  function parseBody(closing) {
    const body = { attrs: [], blocks: [] };
    for (;;) {
      skipSpaces(true);
      if (i >= n) return body;
      if (closing && peek() === '}') { advance(); return body; }
      const startLine = line;
      const name = readIdent();
      if (name === null) { advance(); continue; } // not HCL we understand: resynchronise
      skipSpaces(false);
      if (peek() === '=' && peek(1) !== '=') {
        advance();
        skipExpression(null);
        body.attrs.push({ name, line: startLine });
        continue;
      }
      const labels = [];
      while (i < n && peek() !== '{' && peek() !== '\n') {
        const label = readLabel();
        if (label === null) break;
        labels.push(label);
        skipSpaces(false);
      }
      if (peek() === '{') {
        advance();
        body.blocks.push({ type: name, labels, line: startLine, body: parseBody(true) });
      }
    }
  }
  return parseBody(false);
}

