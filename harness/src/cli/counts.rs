//! Counts and quoted values on the command line: a count is digits or `2^k` within bounds
//! checked before anything is allocated for it, and a refused value is quoted short.

/// `line` with every `'…'`-quoted part longer than 40 characters cut (clap quotes the
/// value it refused: a 400-digit size would fill the line).
pub(super) fn shorten_quotes(line: &str) -> String {
    let parts: Vec<&str> = line.split('\'').collect();
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 && i + 1 < parts.len() {
                shown(part)
            } else {
                (*part).to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("'")
}

/// The most iterations one run may ask for (`--iters`).
pub(crate) const MAX_ITERATIONS: usize = 1 << 30;

/// The most runs per size, rounds or problems a flag may ask for (`--repeat`,
/// `--max-repeat`, `--grids`): each holds memory, so more would not fit.
pub(crate) const MAX_REPEATS: usize = 1 << 20;

/// `text` cut to a length an error line can show.
pub(crate) fn shown(text: &str) -> String {
    let count = text.chars().count();
    if count <= 40 {
        text.to_string()
    } else {
        format!(
            "{}… (cut: {count} characters in all)",
            text.chars().take(40).collect::<String>()
        )
    }
}

/// A count from the command line, written as digits or `2^k` (as sizes are), from `min` to
/// `max`.
pub(crate) fn count_in(text: &str, min: usize, max: usize) -> Result<usize, String> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let value: Option<u128> = match text.split_once('^') {
        Some(("2", k)) if digits(k) => Some(match k.parse::<u32>() {
            Ok(k) if k < 128 => 1u128 << k,
            _ => u128::MAX,
        }),
        Some(_) => None,
        None if digits(text) => Some(text.parse::<u128>().unwrap_or(u128::MAX)),
        None => None,
    };
    match value {
        None => Err(format!(
            "`{}` is not a whole number (digits or 2^k)",
            shown(text)
        )),
        Some(v) if v < min as u128 => Err(format!("must be at least {min}")),
        Some(v) if v > max as u128 => Err(format!("`{}` is more than {max}", shown(text))),
        Some(v) => Ok(v as usize),
    }
}

/// A count that must be at least 1 (`--iters`).
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    count_in(text, 1, MAX_ITERATIONS)
}

/// A number of runs, rounds or problems (`--repeat`, `--grids`).
pub(crate) fn repeat_count(text: &str) -> Result<usize, String> {
    count_in(text, 1, MAX_REPEATS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_bounded_and_say_what_is_wrong() {
        assert_eq!(at_least_one("16"), Ok(16));
        assert_eq!(repeat_count("2^10"), Ok(1024));
        assert!(
            at_least_one(" 16").is_err(),
            "no blanks, as sizes take none"
        );
        assert_eq!(at_least_one("0"), Err("must be at least 1".into()));
        for huge in ["2^64", "18446744073709551616", "1099511627776", "2^40"] {
            let e = repeat_count(huge).unwrap_err();
            assert!(e.contains("is more than"), "{huge}: {e}");
        }
        let e = repeat_count(&"9".repeat(400)).unwrap_err();
        assert!(e.chars().count() < 120, "{e}");
        assert!(repeat_count("3^2")
            .unwrap_err()
            .contains("not a whole number"));
    }

    #[test]
    fn long_quoted_values_are_cut() {
        let line = format!(
            "error: invalid value '{}' for '--size <SIZE>'",
            "9".repeat(500)
        );
        let short = shorten_quotes(&line);
        assert!(short.chars().count() < 150, "{short}");
        assert!(short.ends_with("for '--size <SIZE>'"), "{short}");
    }
}
