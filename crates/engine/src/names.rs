//! Relation keys (REL-KEY in the crate README): how the SQL layer names a
//! relation or type to the engine, and what the backend's catalog cache is
//! keyed by.
//!
//! A key is the name as the statement wrote it, already folded: `name`
//! alone (found through the session's search_path), or `schema.name`. A
//! part is written between double quotes, with inner quotes doubled, when
//! it holds a `.` or a `"` or is empty, so that every pair of parts has
//! one key and every key one pair; the common key is the name itself,
//! which is also what error messages print (PostgreSQL prints a name as
//! it was written: `relation "s1.t" does not exist`).

/// The key of `name`, in `schema` if one is given.
pub fn key(schema: Option<&str>, name: &str) -> String {
    match schema {
        Some(s) => format!("{}.{}", part(s), part(name)),
        None => part(name).into_owned(),
    }
}

fn part(p: &str) -> std::borrow::Cow<'_, str> {
    if p.is_empty() || p.contains(['.', '"']) {
        format!("\"{}\"", p.replace('"', "\"\"")).into()
    } else {
        p.into()
    }
}

/// The schema (if the key names one) and the name of `key`. A key no
/// [`key`] made (a stray quote) is read as a name alone.
pub fn split(key: &str) -> (Option<String>, String) {
    let Some((first, rest)) = take_part(key) else { return (None, key.to_owned()) };
    if rest.is_empty() {
        return (None, first);
    }
    match rest.strip_prefix('.').and_then(take_part) {
        Some((second, "")) => (Some(first), second),
        _ => (None, key.to_owned()),
    }
}

/// The name of `key`, without its schema.
pub fn bare(key: &str) -> String {
    split(key).1
}

/// One part at the start of `s`, and what follows it.
fn take_part(s: &str) -> Option<(String, &str)> {
    let Some(quoted) = s.strip_prefix('"') else {
        let end = s.find('.').unwrap_or(s.len());
        return Some((s[..end].to_owned(), &s[end..]));
    };
    let mut out = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            out.push(c);
            continue;
        }
        if quoted[i + 1..].starts_with('"') {
            out.push('"');
            chars.next();
            continue;
        }
        return Some((out, &quoted[i + 1..]));
    }
    None
}

/// The schemas a search_path value names, in order: identifiers split at
/// commas, folded to lower case unless quoted, `$user` (quoted or not)
/// replaced by `user`; an unreadable value names none (PostgreSQL's
/// check hook refuses those at SET, so only an empty value names none).
pub fn search_path(value: &str, user: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value.trim();
    while !rest.is_empty() {
        let (name, quoted, after) = match rest.strip_prefix('"') {
            Some(q) => {
                let mut name = String::new();
                let mut chars = q.char_indices();
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    if c != '"' {
                        name.push(c);
                    } else if q[i + 1..].starts_with('"') {
                        name.push('"');
                        chars.next();
                    } else {
                        end = Some(i + 1);
                        break;
                    }
                }
                let Some(end) = end else { return Vec::new() };
                (name, true, &q[end..])
            }
            None => {
                let end = rest.find(',').unwrap_or(rest.len());
                (rest[..end].trim().to_lowercase(), false, &rest[end..])
            }
        };
        if name == "$user" {
            out.push(user.to_owned());
        } else if !name.is_empty() || quoted {
            out.push(name);
        }
        rest = after.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => {}
            None => return Vec::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        for (schema, name) in [
            (None, "t"),
            (Some("s1"), "t"),
            (None, "a.b"),
            (Some("x.y"), "q\"r"),
            (Some(""), ""),
            (Some("S"), "Mixed Case"),
            (None, "\""),
        ] {
            let k = key(schema, name);
            assert_eq!(split(&k), (schema.map(str::to_owned), name.to_owned()), "{k}");
        }
        assert_eq!(key(Some("s1"), "t"), "s1.t");
        assert_eq!(key(None, "a.b"), "\"a.b\"");
        assert_eq!(bare("s1.t"), "t");
    }

    #[test]
    fn search_paths_name_their_schemas() {
        assert_eq!(search_path("\"$user\", public", "alice"), ["alice", "public"]);
        assert_eq!(search_path("S1,  \"Mixed\"\"x\" , public", "u"), ["s1", "Mixed\"x", "public"]);
        assert_eq!(search_path("", "u"), Vec::<String>::new());
        assert_eq!(search_path("$user", "u"), ["u"]);
    }
}
