//! The few pieces of C a reader of kernel sources needs ([`super`]): comments stripped, a
//! kernel's parameters and body found, brackets and statements matched, and the integer
//! expressions of subscripts and loop headers parsed. Not a C parser: what it does not
//! recognise it returns as nothing.

/// A kernel parameter.
#[derive(Debug, Clone)]
pub(super) struct Param {
    pub(super) name: String,
    pub(super) pointer: bool,
    /// The declaration without the name (`GLOBAL const float* RESTRICT`).
    pub(super) declaration: String,
}

/// `source` with its comments removed (a block comment becomes a space).
pub(super) fn strip_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |e| &r[e + 2..]);
            out.push(' ');
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |e| &r[e..]);
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The launch's width in each dialect's spelling, as the common dialect's `GSIZE0`.
pub(super) fn normalise(text: &str) -> String {
    let squeezed: String = text.replace("get_global_size(0)", "GSIZE0");
    let mut out = squeezed;
    for cuda in [
        "blockDim.x * gridDim.x",
        "gridDim.x * blockDim.x",
        "blockDim.x*gridDim.x",
        "gridDim.x*blockDim.x",
    ] {
        out = out.replace(cuda, "GSIZE0");
    }
    out
}

/// `#define NAME number` lines.
pub(super) fn numeric_defines(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.trim().strip_prefix("#define")?.split_whitespace();
            let name = words.next()?;
            let value = number(words.next()?.trim_matches(|c| c == '(' || c == ')'))?;
            words.next().is_none().then(|| (name.to_string(), value))
        })
        .collect()
}

/// A C number literal without its suffix.
pub(super) fn number(token: &str) -> Option<f64> {
    let digits = token.trim_end_matches(['u', 'U', 'l', 'L', 'f', 'F']);
    if let Some(hex) = digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|v| v as f64);
    }
    digits.parse::<f64>().ok()
}

/// A character of an identifier or a number.
pub(super) fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The byte just past the bracket that closes the one at `open`.
pub(super) fn matching(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (o, c) = match bytes[open] {
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        b'{' => (b'{', b'}'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// Positions where the word `word` starts in `text`.
pub(super) fn word_positions<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(|c| is_word(c) || c == '.') && !after.is_some_and(is_word)
    })
}

/// Whether the text at `at..end` (a name, a subscript) is written there: assigned (`=`, not
/// `==`), changed (`+=`, `<<=`, `++`, `--`, before or after it) or its address taken (`&`,
/// not `&&`: an atomic's operand).
pub(super) fn writes_at(text: &str, at: usize, end: usize) -> bool {
    let after = text[end..].trim_start();
    let before = text[..at].trim_end();
    (after.starts_with('=') && !after.starts_with("=="))
        || [
            "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>=", "++", "--",
        ]
        .iter()
        .any(|op| after.starts_with(op))
        || (before.ends_with('&') && !before.ends_with("&&"))
        || before.ends_with("++")
        || before.ends_with("--")
}

/// The first byte from `at` on that is no white space.
pub(super) fn skip_space(text: &str, at: usize) -> usize {
    at + text[at..].len() - text[at..].trim_start().len()
}

/// The kernel's parameters and body text.
pub(super) fn kernel_parts(text: &str, kernel: &str) -> Option<(Vec<Param>, String)> {
    for at in word_positions(text, kernel) {
        let open = skip_space(text, at + kernel.len());
        if text.as_bytes().get(open) != Some(&b'(') {
            continue;
        }
        // A definition: the parameter list is followed by its body.
        let close = matching(text, open)?;
        let brace = skip_space(text, close);
        if text.as_bytes().get(brace) != Some(&b'{') {
            continue;
        }
        // `KERNEL name(` in the common dialect, `… void name(` in OpenCL C and CUDA.
        let before = text[..at].trim_end();
        if !(before.ends_with("KERNEL") || before.ends_with("void")) {
            continue;
        }
        let end = matching(text, brace)?;
        let params = split_top(&text[open + 1..close - 1], ',')
            .into_iter()
            .map(|p| {
                let p = p.trim();
                let name = last_word(p).to_string();
                Param {
                    declaration: p[..p.len() - name.len()].trim().to_string(),
                    name,
                    pointer: p.contains('*'),
                }
            })
            .collect();
        return Some((params, text[brace + 1..end - 1].to_string()));
    }
    None
}

/// The identifier `text` ends with (empty where it ends otherwise).
fn last_word(text: &str) -> &str {
    let start = text
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_word(c))
        .last()
        .map_or(text.len(), |(i, _)| i);
    &text[start..]
}

/// The kernels `text` defines, in order: `KERNEL name(` in the common dialect, `__kernel
/// void name(` in OpenCL C, `__global__ void name(` in CUDA, each with a body.
pub(super) fn kernel_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (at, _) in text.match_indices('(') {
        let head = text[..at].trim_end();
        let name = last_word(head).to_string();
        let before = head[..head.len() - name.len()].trim_end();
        let marked = before.ends_with("KERNEL")
            || ["__kernel", "kernel", "__global__"].iter().any(|k| {
                before
                    .strip_suffix("void")
                    .is_some_and(|b| b.trim_end().ends_with(k))
            });
        if marked
            && !name.is_empty()
            && !names.contains(&name)
            && kernel_parts(text, &name).is_some()
        {
            names.push(name);
        }
    }
    names
}

/// `text` split at `sep` outside brackets.
pub(super) fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The byte past the statement starting at `start`: a block, a `for`, `while` or `if` with
/// the statement it controls, or what runs to the next `;`.
pub(super) fn statement_end(text: &str, start: usize) -> Option<usize> {
    // A loop, not a recursion: a source nesting `if (…) if (…) …` thousands deep is read,
    // not a stack overflow.
    let mut start = start;
    'statement: loop {
        if text.as_bytes().get(start) == Some(&b'{') {
            return matching(text, start);
        }
        for keyword in ["for", "while", "if"] {
            let rest = &text[start..];
            if rest.starts_with(keyword) && !rest[keyword.len()..].starts_with(is_word) {
                let open = skip_space(text, start + keyword.len());
                if text.as_bytes().get(open) != Some(&b'(') {
                    return None;
                }
                start = skip_space(text, matching(text, open)?);
                continue 'statement;
            }
        }
        let mut depth = 0i32;
        for (i, c) in text[start..].char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ';' if depth == 0 => return Some(start + i + 1),
                _ => {}
            }
        }
        return None;
    }
}

/// The most tokens an expression the reader parses may have.
const MAX_TOKENS: usize = 256;

/// The words of an integer type, skipped before a declared loop counter and in a cast.
pub(super) const TYPE_WORDS: &[&str] = &[
    "const", "unsigned", "signed", "uint", "int", "long", "ulong", "size_t", "short", "ushort",
];

/// A C expression, as far as the reader follows one.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ast {
    Num(f64),
    Ident(String),
    Call(String, Vec<Ast>),
    Neg(Box<Ast>),
    Bin(char, Box<Ast>, Box<Ast>),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Ident(String),
    Punct(char),
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let s = i;
            while i < chars.len() && (is_word(chars[i]) || chars[i] == '.') {
                i += 1;
            }
            out.push(Token::Num(number(&chars[s..i].iter().collect::<String>())?));
        } else if is_word(c) {
            let s = i;
            while i < chars.len() && (is_word(chars[i]) || chars[i] == '.') {
                i += 1;
            }
            out.push(Token::Ident(chars[s..i].iter().collect()));
        } else if "+-*/%(),".contains(c) {
            out.push(Token::Punct(c));
            i += 1;
        } else if c == '[' || c == ']' {
            // A subscript reads as a call of the array (`offset[b]` as `offset(b)`): a value
            // the reader does not know, which depends on what its index mentions.
            out.push(Token::Punct(if c == '[' { '(' } else { ')' }));
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// `text` as an expression of numbers, names, calls (a subscript among them), `+ - * / %`
/// and casts; `None` for anything else (a comparison, a ternary).
pub(super) fn parse_expr(text: &str) -> Option<Ast> {
    let tokens = tokens(text)?;
    // A subscript or a loop bound is a few dozen tokens; the parser recurses once per
    // parenthesis and sign, so a longer text is left unread rather than risk the stack.
    if tokens.len() > MAX_TOKENS {
        return None;
    }
    let mut at = 0;
    let ast = sum(&tokens, &mut at)?;
    (at == tokens.len()).then_some(ast)
}

fn sum(t: &[Token], at: &mut usize) -> Option<Ast> {
    let mut left = product(t, at)?;
    while let Some(Token::Punct(op @ ('+' | '-'))) = t.get(*at) {
        *at += 1;
        left = Ast::Bin(*op, Box::new(left), Box::new(product(t, at)?));
    }
    Some(left)
}

fn product(t: &[Token], at: &mut usize) -> Option<Ast> {
    let mut left = unary(t, at)?;
    while let Some(Token::Punct(op @ ('*' | '/' | '%'))) = t.get(*at) {
        *at += 1;
        left = Ast::Bin(*op, Box::new(left), Box::new(unary(t, at)?));
    }
    Some(left)
}

fn unary(t: &[Token], at: &mut usize) -> Option<Ast> {
    match t.get(*at)? {
        Token::Punct('-') => {
            *at += 1;
            Some(Ast::Neg(Box::new(unary(t, at)?)))
        }
        Token::Punct('+') => {
            *at += 1;
            unary(t, at)
        }
        Token::Punct('(') => {
            // A cast `(uint)` applies to what follows; anything else is a parenthesis.
            let mut k = *at + 1;
            while let Some(Token::Ident(w)) = t.get(k) {
                if !TYPE_WORDS.contains(&w.as_str()) && w != "float" {
                    break;
                }
                k += 1;
            }
            if k > *at + 1 && t.get(k) == Some(&Token::Punct(')')) {
                *at = k + 1;
                return unary(t, at);
            }
            *at += 1;
            let inner = sum(t, at)?;
            (t.get(*at) == Some(&Token::Punct(')'))).then(|| *at += 1)?;
            Some(inner)
        }
        Token::Num(v) => {
            *at += 1;
            Some(Ast::Num(*v))
        }
        Token::Ident(name) => {
            *at += 1;
            if t.get(*at) != Some(&Token::Punct('(')) {
                return Some(Ast::Ident(name.clone()));
            }
            *at += 1;
            let mut args = Vec::new();
            while t.get(*at) != Some(&Token::Punct(')')) {
                args.push(sum(t, at)?);
                if t.get(*at) == Some(&Token::Punct(',')) {
                    *at += 1;
                }
            }
            *at += 1;
            Some(Ast::Call(name.clone(), args))
        }
        Token::Punct(_) => None,
    }
}
