//! The jsonpath evaluator: PostgreSQL's executor walk (lax and strict
//! modes, automatic wrapping and unwrapping, structural errors, silent
//! mode, SQL/JSON three-valued predicates), kept in the same order of
//! evaluation so that the same errors surface and early exits (exists
//! mode) skip the same work.

use std::cmp::Ordering;
use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::ast::*;
use super::datetime::DateTime;
use super::methods;
use crate::json::Jsonb;
use crate::numeric::Numeric;
use crate::SqlError;

/// An SQL/JSON item: a jsonb value or a datetime.
#[derive(Clone, Debug)]
pub(crate) enum V {
    J(Jsonb),
    Dt(DateTime),
}

/// An item with where it lives, for `.keyvalue()` ids: the binary it is
/// part of (0 the target, 1 the vars, then generated objects; -1 none)
/// and its byte offset in PostgreSQL's jsonb layout of that binary.
#[derive(Clone, Debug)]
pub(crate) struct It {
    pub v: V,
    pub home: i64,
    pub off: usize,
}

impl It {
    pub(crate) fn free(v: Jsonb) -> It {
        It { v: V::J(v), home: -1, off: 0 }
    }

    fn json(&self) -> Option<&Jsonb> {
        match &self.v {
            V::J(j) => Some(j),
            V::Dt(_) => None,
        }
    }

    fn is_array(&self) -> bool {
        matches!(self.v, V::J(Jsonb::Array(_)))
    }

    fn is_object(&self) -> bool {
        matches!(self.v, V::J(Jsonb::Object(_)))
    }

    fn is_container(&self) -> bool {
        self.is_array() || self.is_object()
    }

    fn number(&self) -> Option<&Numeric> {
        match &self.v {
            V::J(Jsonb::Number(n)) => Some(n),
            _ => None,
        }
    }

    fn string(&self) -> Option<&str> {
        match &self.v {
            V::J(Jsonb::String(s)) => Some(s),
            _ => None,
        }
    }

    /// The result value as jsonb (datetimes become their ISO strings).
    pub(crate) fn into_jsonb(self) -> Jsonb {
        match self.v {
            V::J(j) => j,
            V::Dt(d) => Jsonb::String(Arc::from(d.to_iso())),
        }
    }
}

/// An execution status: found something, found nothing, or an error that
/// silent mode suppressed (errors raised are `Err`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Res {
    Ok,
    NotFound,
    Error,
}

/// SQL/JSON truth values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum B {
    True,
    False,
    Unknown,
}

type R = Result<Res, SqlError>;

/// A predicate over a left item and (for binary predicates) a right one.
type PredFn<'f> = dyn FnMut(&It, Option<&It>) -> Result<B, SqlError> + 'f;

pub(crate) struct Cx<'a> {
    pub root: It,
    pub vars: Option<&'a Jsonb>,
    pub lax: bool,
    pub ignore_struct: bool,
    pub throw: bool,
    pub current: It,
    pub innermost: i64,
    pub base_home: i64,
    pub base_id: i64,
    pub last_id: i64,
    pub track: bool,
    pub base: usize,
}

/// Returns a suppressed error in silent mode, raises it otherwise.
macro_rules! ret_err {
    ($cx:expr, $e:expr) => {{
        if $cx.throw {
            return Err($e);
        }
        return Ok(Res::Error);
    }};
}

fn err(code: SqlState, msg: impl Into<String>) -> SqlError {
    SqlError::new(code, msg)
}

/// The type name `.type()` reports.
pub(crate) fn type_name(it: &It) -> &'static str {
    match &it.v {
        V::J(Jsonb::Null) => "null",
        V::J(Jsonb::Bool(_)) => "boolean",
        V::J(Jsonb::Number(_)) => "number",
        V::J(Jsonb::String(_)) => "string",
        V::J(Jsonb::Array(_)) => "array",
        V::J(Jsonb::Object(_)) => "object",
        V::Dt(d) => d.type_name(),
    }
}

fn chain_has_keyvalue(c: &Chain) -> bool {
    c.0.iter().any(|i| match i {
        Item::Method(Method::KeyValue) => true,
        Item::Binary(_, l, r) => chain_has_keyvalue(l) || chain_has_keyvalue(r),
        Item::Unary(_, a) => chain_has_keyvalue(a),
        Item::LikeRegex { expr, .. } => chain_has_keyvalue(expr),
        Item::Index(subs) => {
            subs.iter().any(|(f, t)| chain_has_keyvalue(f) || t.as_ref().is_some_and(chain_has_keyvalue))
        }
        _ => false,
    })
}

/// executeJsonPath: runs `path` over `target`; `found` None is exists mode.
pub(crate) fn execute(
    path: &Chain,
    lax: bool,
    target: &Jsonb,
    vars: Option<&Jsonb>,
    throw: bool,
    found: Option<&mut Vec<It>>,
) -> R {
    if let Some(v) = vars {
        if !matches!(v, Jsonb::Object(_)) {
            return Err(err(SqlState::INVALID_PARAMETER_VALUE, "\"vars\" argument is not an object")
                .with_detail(
                    "Jsonpath parameters should be encoded as key-value pairs of \"vars\" object.",
                ));
        }
    }
    let root = It { v: V::J(target.clone()), home: if target.is_container() { 0 } else { -1 }, off: 0 };
    let mut cx = Cx {
        root: root.clone(),
        vars,
        lax,
        ignore_struct: lax,
        throw,
        current: root.clone(),
        innermost: -1,
        base_home: -1,
        base_id: 0,
        last_id: if vars.is_some() { 2 } else { 1 },
        track: chain_has_keyvalue(path),
        base: super::parse::stack_pos(),
    };
    if !lax && found.is_none() {
        let mut vals = Vec::new();
        let res = cx.item(&path.0, &root, Some(&mut vals))?;
        if res == Res::Error {
            return Ok(res);
        }
        return Ok(if vals.is_empty() { Res::NotFound } else { Res::Ok });
    }
    cx.item(&path.0, &root, found)
}

impl<'a> Cx<'a> {
    pub(crate) fn item(&mut self, c: &[Item], jb: &It, found: Option<&mut Vec<It>>) -> R {
        let unwrap = self.lax;
        self.item_opt_unwrap(c, jb, found, unwrap)
    }

    /// Children of a container with their offsets when tracked.
    fn children(&self, jb: &It) -> Vec<It> {
        let Some(j) = jb.json() else { return Vec::new() };
        let vals: Vec<&Jsonb> = match j {
            Jsonb::Array(a) => a.iter().collect(),
            Jsonb::Object(o) => o.iter().map(|(_, v)| v).collect(),
            _ => return Vec::new(),
        };
        let offs = if self.track && jb.home >= 0 { methods::child_offsets(j) } else { Vec::new() };
        vals.into_iter()
            .enumerate()
            .map(|(i, v)| {
                let (home, off) = match offs.get(i) {
                    Some(o) if v.is_container() => (jb.home, jb.off + o),
                    _ => (-1, 0),
                };
                It { v: V::J(v.clone()), home, off }
            })
            .collect()
    }

    fn child(&self, jb: &It, idx: usize) -> It {
        let Some(Jsonb::Array(a)) = jb.json() else { unreachable!("child of a non-array") };
        let v = &a[idx];
        if self.track && jb.home >= 0 && v.is_container() {
            let offs = methods::child_offsets(jb.json().expect("json"));
            return It { v: V::J(v.clone()), home: jb.home, off: jb.off + offs[idx] };
        }
        It { v: V::J(v.clone()), home: -1, off: 0 }
    }

    fn member(&self, jb: &It, key: &str) -> Option<It> {
        let Some(Jsonb::Object(o)) = jb.json() else { return None };
        let idx = o.binary_search_by(|(k, _)| crate::json::key_order(k, key)).ok()?;
        let v = &o[idx].1;
        if self.track && jb.home >= 0 && v.is_container() {
            let offs = methods::child_offsets(jb.json().expect("json"));
            return Some(It { v: V::J(v.clone()), home: jb.home, off: jb.off + offs[idx] });
        }
        Some(It { v: V::J(v.clone()), home: -1, off: 0 })
    }

    /// executeNextItem: runs the rest of chain `c` (after its head) on
    /// `v`, or collects `v` when the chain ends.
    pub(crate) fn next(&mut self, c: &[Item], v: It, found: Option<&mut Vec<It>>) -> R {
        if c.len() > 1 {
            return self.item(&c[1..], &v, found);
        }
        if let Some(f) = found {
            f.push(v);
        }
        Ok(Res::Ok)
    }

    fn item_opt_unwrap(&mut self, c: &[Item], jb: &It, found: Option<&mut Vec<It>>, unwrap: bool) -> R {
        if super::parse::too_deep_from(self.base) {
            return Err(super::parse::too_deep());
        }
        self.item_inner(c, jb, found, unwrap)
    }

    fn item_inner(&mut self, c: &[Item], jb: &It, mut found: Option<&mut Vec<It>>, unwrap: bool) -> R {
        let has_next = c.len() > 1;
        let rest = &c[1..];
        match &c[0] {
            item if item.is_predicate() => {
                let st = self.bool_item(&c[0], jb, true)?;
                if !has_next && found.is_none() {
                    return Ok(Res::Ok);
                }
                let v = match st {
                    B::Unknown => Jsonb::Null,
                    B::True => Jsonb::Bool(true),
                    B::False => Jsonb::Bool(false),
                };
                self.next(c, It::free(v), found)
            }
            Item::Key(k) => {
                if jb.is_object() {
                    match self.member(jb, k) {
                        Some(v) => self.next(c, v, found),
                        None => {
                            if !self.ignore_struct {
                                if !self.throw {
                                    return Ok(Res::Error);
                                }
                                return Err(err(
                                    SqlState::SQL_JSON_MEMBER_NOT_FOUND,
                                    format!("JSON object does not contain key \"{k}\""),
                                ));
                            }
                            Ok(Res::NotFound)
                        }
                    }
                } else if unwrap && jb.is_array() {
                    self.unwrap_array(Some(c), jb, found, false)
                } else if !self.ignore_struct {
                    ret_err!(
                        self,
                        err(
                            SqlState::SQL_JSON_MEMBER_NOT_FOUND,
                            "jsonpath member accessor can only be applied to an object"
                        )
                    )
                } else {
                    Ok(Res::NotFound)
                }
            }
            Item::Root => {
                let saved = (self.base_home, self.base_id);
                self.base_home = self.root.home;
                self.base_id = 0;
                let root = self.root.clone();
                let r = self.next(c, root, found);
                (self.base_home, self.base_id) = saved;
                r
            }
            Item::Current => {
                let cur = self.current.clone();
                self.next(c, cur, found)
            }
            Item::AnyArray => {
                if jb.is_array() {
                    let lax = self.lax;
                    self.any(has_next.then_some(rest), jb, found, 1, 1, 1, false, lax)
                } else if self.lax {
                    self.next(c, jb.clone(), found)
                } else if !self.ignore_struct {
                    ret_err!(
                        self,
                        err(
                            SqlState::SQL_JSON_ARRAY_NOT_FOUND,
                            "jsonpath wildcard array accessor can only be applied to an array"
                        )
                    )
                } else {
                    Ok(Res::NotFound)
                }
            }
            Item::Index(subs) => {
                if !(jb.is_array() || self.lax) {
                    if !self.ignore_struct {
                        ret_err!(
                            self,
                            err(
                                SqlState::SQL_JSON_ARRAY_NOT_FOUND,
                                "jsonpath array accessor can only be applied to an array"
                            )
                        );
                    }
                    return Ok(Res::NotFound);
                }
                let saved = self.innermost;
                let arr_size = match jb.json() {
                    Some(Jsonb::Array(a)) => a.len() as i64,
                    _ => -1,
                };
                let singleton = arr_size < 0;
                let size = if singleton { 1 } else { arr_size };
                self.innermost = size;
                let mut res = Res::NotFound;
                for (from, to) in subs {
                    let (r, f) = self.array_index(from, jb)?;
                    res = r;
                    if res == Res::Error {
                        break;
                    }
                    let t = match to {
                        Some(to) => {
                            let (r, t) = self.array_index(to, jb)?;
                            res = r;
                            if res == Res::Error {
                                break;
                            }
                            t
                        }
                        None => f,
                    };
                    if !self.ignore_struct && (f < 0 || f > t || t >= size) {
                        ret_err!(
                            self,
                            err(
                                SqlState::INVALID_SQL_JSON_SUBSCRIPT,
                                "jsonpath array subscript is out of bounds"
                            )
                        );
                    }
                    let f = f.max(0);
                    let t = t.min(size - 1);
                    res = Res::NotFound;
                    let mut i = f;
                    while i <= t {
                        let v = if singleton { jb.clone() } else { self.child(jb, i as usize) };
                        if !has_next && found.is_none() {
                            return Ok(Res::Ok);
                        }
                        res = self.next(c, v, found.as_deref_mut())?;
                        if res == Res::Error || (res == Res::Ok && found.is_none()) {
                            break;
                        }
                        i += 1;
                    }
                    if res == Res::Error || (res == Res::Ok && found.is_none()) {
                        break;
                    }
                }
                self.innermost = saved;
                Ok(res)
            }
            Item::Last => {
                if !has_next && found.is_none() {
                    return Ok(Res::Ok);
                }
                let last = self.innermost - 1;
                self.next(c, It::free(Jsonb::Number(Numeric::from(last))), found)
            }
            Item::AnyKey => {
                if jb.is_object() {
                    let lax = self.lax;
                    self.any(has_next.then_some(rest), jb, found, 1, 1, 1, false, lax)
                } else if unwrap && jb.is_array() {
                    self.unwrap_array(Some(c), jb, found, false)
                } else if !self.ignore_struct {
                    ret_err!(
                        self,
                        err(
                            SqlState::SQL_JSON_OBJECT_NOT_FOUND,
                            "jsonpath wildcard member accessor can only be applied to an object"
                        )
                    )
                } else {
                    Ok(Res::NotFound)
                }
            }
            Item::Binary(op, l, r) => self.binary_arith(c, *op, l, r, jb, found),
            Item::Unary(UnOp::Plus, a) => self.unary_arith(c, false, a, jb, found),
            Item::Unary(UnOp::Minus, a) => self.unary_arith(c, true, a, jb, found),
            Item::Unary(UnOp::Filter, a) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(c), jb, found, false);
                }
                let st = self.nested_bool(a, jb)?;
                if st != B::True {
                    return Ok(Res::NotFound);
                }
                self.next(c, jb.clone(), found)
            }
            Item::Any { first, last } => {
                let mut res = Res::NotFound;
                if *first == 0 {
                    let saved = self.ignore_struct;
                    self.ignore_struct = true;
                    let r = self.next(c, jb.clone(), found.as_deref_mut());
                    self.ignore_struct = saved;
                    res = r?;
                    if res == Res::Ok && found.is_none() {
                        return Ok(res);
                    }
                }
                if jb.is_container() {
                    let lax = self.lax;
                    res = self.any(has_next.then_some(rest), jb, found, 1, *first, *last, true, lax)?;
                }
                Ok(res)
            }
            Item::Null | Item::Bool(_) | Item::Numeric(_) | Item::String(_) | Item::Variable(_) => {
                if !has_next && found.is_none() && !matches!(c[0], Item::Variable(_)) {
                    return Ok(Res::Ok);
                }
                let saved = (self.base_home, self.base_id);
                let v = match &c[0] {
                    Item::Null => It::free(Jsonb::Null),
                    Item::Bool(b) => It::free(Jsonb::Bool(*b)),
                    Item::Numeric(n) => It::free(Jsonb::Number(n.clone())),
                    Item::String(s) => It::free(Jsonb::String(Arc::from(s.as_str()))),
                    Item::Variable(name) => self.variable(name)?,
                    _ => unreachable!(),
                };
                let r = self.next(c, v, found);
                (self.base_home, self.base_id) = saved;
                r
            }
            Item::Method(Method::Type) => {
                let v = It::free(Jsonb::String(Arc::from(type_name(jb))));
                self.next(c, v, found)
            }
            Item::Method(Method::Size) => {
                let size = match jb.json() {
                    Some(Jsonb::Array(a)) => a.len() as i64,
                    _ => {
                        if !self.lax {
                            if !self.ignore_struct {
                                ret_err!(
                                    self,
                                    err(
                                        SqlState::SQL_JSON_ARRAY_NOT_FOUND,
                                        "jsonpath item method .size() can only be applied to an array"
                                    )
                                );
                            }
                            return Ok(Res::NotFound);
                        }
                        1
                    }
                };
                self.next(c, It::free(Jsonb::Number(Numeric::from(size))), found)
            }
            Item::Method(m @ (Method::Abs | Method::Floor | Method::Ceiling)) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(c), jb, found, false);
                }
                let Some(n) = jb.number() else {
                    ret_err!(
                        self,
                        err(
                            SqlState::NON_NUMERIC_SQL_JSON_ITEM,
                            format!(
                                "jsonpath item method .{}() can only be applied to a numeric value",
                                m.name()
                            )
                        )
                    )
                };
                let v = match m {
                    Method::Abs => n.abs(),
                    Method::Floor => n.floor()?,
                    _ => n.ceil()?,
                };
                if !has_next && found.is_none() {
                    return Ok(Res::Ok);
                }
                self.next(c, It::free(Jsonb::Number(v)), found)
            }
            Item::Method(Method::Double) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(c), jb, found, false);
                }
                let v = match methods::double(jb) {
                    Ok(v) => v,
                    Err(e) => ret_err!(self, e),
                };
                self.next(c, v, found)
            }
            Item::Datetime(tmpl) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(c), jb, found, false);
                }
                let Some(s) = jb.string() else {
                    ret_err!(
                        self,
                        err(
                            SqlState::INVALID_ARGUMENT_FOR_SQL_JSON_DATETIME_FUNCTION,
                            "jsonpath item method .datetime() can only be applied to a string"
                        )
                    )
                };
                let parsed = match tmpl {
                    Some(t) => super::datetime::parse_template(s, t),
                    None => super::datetime::parse_auto(s),
                };
                let d = match parsed {
                    Ok(d) => d,
                    Err(e) => ret_err!(self, e),
                };
                if !has_next && found.is_none() {
                    return Ok(Res::Ok);
                }
                self.next(c, It { v: V::Dt(d), home: -1, off: 0 }, found)
            }
            Item::Method(Method::KeyValue) => {
                if unwrap && jb.is_array() {
                    return self.unwrap_array(Some(c), jb, found, false);
                }
                self.keyvalue(c, jb, found)
            }
            other => unreachable!("unexpected jsonpath item {other:?}"),
        }
    }

    fn variable(&mut self, name: &str) -> Result<It, SqlError> {
        let Some(vars) = self.vars else { return Ok(It::free(Jsonb::Null)) };
        let Jsonb::Object(o) = vars else { return Ok(It::free(Jsonb::Null)) };
        let Ok(idx) = o.binary_search_by(|(k, _)| crate::json::key_order(k, name)) else {
            return Err(err(
                SqlState::UNDEFINED_OBJECT,
                format!("could not find jsonpath variable \"{name}\""),
            ));
        };
        self.base_home = 1;
        self.base_id = 1;
        let v = &o[idx].1;
        if self.track && v.is_container() {
            let offs = methods::child_offsets(vars);
            return Ok(It { v: V::J(v.clone()), home: 1, off: offs[idx] });
        }
        Ok(It::free(v.clone()))
    }

    /// `.keyvalue()`.
    fn keyvalue(&mut self, c: &[Item], jb: &It, mut found: Option<&mut Vec<It>>) -> R {
        let Some(Jsonb::Object(o)) = jb.json() else {
            ret_err!(
                self,
                err(
                    SqlState::SQL_JSON_OBJECT_NOT_FOUND,
                    "jsonpath item method .keyvalue() can only be applied to an object"
                )
            )
        };
        if o.is_empty() {
            return Ok(Res::NotFound);
        }
        let has_next = c.len() > 1;
        let id = jb.off as i64 + self.base_id * 10_000_000_000;
        let mut res = Res::NotFound;
        for (k, v) in o.iter() {
            res = Res::Ok;
            if !has_next && found.is_none() {
                break;
            }
            let obj = Jsonb::object(vec![
                ("key", Jsonb::String(k.clone())),
                ("value", v.clone()),
                ("id", Jsonb::Number(Numeric::from(id))),
            ]);
            let new_id = self.last_id;
            self.last_id += 1;
            let saved = (self.base_home, self.base_id);
            self.base_home = new_id;
            self.base_id = new_id;
            let r = self.next(c, It { v: V::J(obj), home: new_id, off: 0 }, found.as_deref_mut());
            (self.base_home, self.base_id) = saved;
            res = r?;
            if res == Res::Error || (res == Res::Ok && found.is_none()) {
                return Ok(res);
            }
        }
        Ok(res)
    }

    fn array_index(&mut self, c: &Chain, jb: &It) -> Result<(Res, i64), SqlError> {
        let mut found = Vec::new();
        let res = self.item(&c.0, jb, Some(&mut found))?;
        if res == Res::Error {
            return Ok((res, 0));
        }
        let n = match (found.len(), found.first().and_then(|i| i.number())) {
            (1, Some(n)) => n.clone(),
            _ => {
                if self.throw {
                    return Err(err(
                        SqlState::INVALID_SQL_JSON_SUBSCRIPT,
                        "jsonpath array subscript is not a single numeric value",
                    ));
                }
                return Ok((Res::Error, 0));
            }
        };
        let idx = n.trunc(0).ok().and_then(|t| t.to_i32().ok());
        match idx {
            Some(i) => Ok((Res::Ok, i64::from(i))),
            None => {
                if self.throw {
                    return Err(err(
                        SqlState::INVALID_SQL_JSON_SUBSCRIPT,
                        "jsonpath array subscript is out of integer range",
                    ));
                }
                Ok((Res::Error, 0))
            }
        }
    }

    fn unwrap_array(
        &mut self,
        c: Option<&[Item]>,
        jb: &It,
        found: Option<&mut Vec<It>>,
        unwrap_elems: bool,
    ) -> R {
        self.any(c, jb, found, 1, 1, 1, false, unwrap_elems)
    }

    /// executeAnyItem: visits the children of a container down to level
    /// `last`, running `c` (or collecting) from level `first`.
    #[allow(clippy::too_many_arguments)]
    fn any(
        &mut self,
        c: Option<&[Item]>,
        jb: &It,
        mut found: Option<&mut Vec<It>>,
        level: u32,
        first: u32,
        last: u32,
        ignore_struct: bool,
        unwrap_next: bool,
    ) -> R {
        let mut res = Res::NotFound;
        if level > last {
            return Ok(res);
        }
        if super::parse::too_deep_from(self.base) {
            return Err(super::parse::too_deep());
        }
        let r = (|| {
            for v in self.children(jb) {
                if level >= first || (first == LAST_LEVEL && last == LAST_LEVEL && !v.is_container()) {
                    if let Some(c) = c {
                        if ignore_struct {
                            let saved = self.ignore_struct;
                            self.ignore_struct = true;
                            let r = self.item_opt_unwrap(c, &v, found.as_deref_mut(), unwrap_next);
                            self.ignore_struct = saved;
                            res = r?;
                        } else {
                            res = self.item_opt_unwrap(c, &v, found.as_deref_mut(), unwrap_next)?;
                        }
                        if res == Res::Error || (res == Res::Ok && found.is_none()) {
                            break;
                        }
                    } else if let Some(f) = found.as_deref_mut() {
                        f.push(v.clone());
                    } else {
                        return Ok(Res::Ok);
                    }
                }
                if level < last && v.is_container() {
                    res = self.any(
                        c,
                        &v,
                        found.as_deref_mut(),
                        level + 1,
                        first,
                        last,
                        ignore_struct,
                        unwrap_next,
                    )?;
                    if res == Res::Error || (res == Res::Ok && found.is_none()) {
                        break;
                    }
                }
            }
            Ok(res)
        })();
        r
    }

    /// executeItemOptUnwrapResult.
    fn opt_unwrap_result(&mut self, c: &Chain, jb: &It, unwrap: bool, found: Option<&mut Vec<It>>) -> R {
        if unwrap && self.lax {
            let mut seq = Vec::new();
            let res = self.item(&c.0, jb, Some(&mut seq))?;
            if res == Res::Error {
                return Ok(res);
            }
            let found = found.expect("a result list");
            for it in seq {
                if it.is_array() {
                    self.unwrap_array(None, &it, Some(found), false)?;
                } else {
                    found.push(it);
                }
            }
            return Ok(Res::Ok);
        }
        self.item(&c.0, jb, found)
    }

    fn opt_unwrap_result_no_throw(
        &mut self,
        c: &Chain,
        jb: &It,
        unwrap: bool,
        found: Option<&mut Vec<It>>,
    ) -> R {
        let saved = self.throw;
        self.throw = false;
        let r = self.opt_unwrap_result(c, jb, unwrap, found);
        self.throw = saved;
        r
    }

    fn nested_bool(&mut self, c: &Chain, jb: &It) -> Result<B, SqlError> {
        let prev = std::mem::replace(&mut self.current, jb.clone());
        let r = self.bool_chain(c, jb);
        self.current = prev;
        r
    }

    fn bool_chain(&mut self, c: &Chain, jb: &It) -> Result<B, SqlError> {
        self.bool_item(&c.0[0], jb, false)
    }

    fn bool_item(&mut self, item: &Item, jb: &It, _can_have_next: bool) -> Result<B, SqlError> {
        if super::parse::too_deep_from(self.base) {
            return Err(super::parse::too_deep());
        }
        self.bool_inner(item, jb)
    }

    fn bool_inner(&mut self, item: &Item, jb: &It) -> Result<B, SqlError> {
        match item {
            Item::Binary(BinOp::And, l, r) => {
                let a = self.bool_chain(l, jb)?;
                if a == B::False {
                    return Ok(B::False);
                }
                let b = self.bool_chain(r, jb)?;
                Ok(if b == B::True { a } else { b })
            }
            Item::Binary(BinOp::Or, l, r) => {
                let a = self.bool_chain(l, jb)?;
                if a == B::True {
                    return Ok(B::True);
                }
                let b = self.bool_chain(r, jb)?;
                Ok(if b == B::False { a } else { b })
            }
            Item::Unary(UnOp::Not, a) => Ok(match self.bool_chain(a, jb)? {
                B::Unknown => B::Unknown,
                B::True => B::False,
                B::False => B::True,
            }),
            Item::Unary(UnOp::IsUnknown, a) => {
                Ok(if self.bool_chain(a, jb)? == B::Unknown { B::True } else { B::False })
            }
            Item::Binary(
                op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge),
                l,
                r,
            ) => {
                let op = *op;
                self.predicate(l, Some(r), jb, true, &mut |a, b| compare_items(op, a, b))
            }
            Item::Binary(BinOp::StartsWith, l, r) => self.predicate(l, Some(r), jb, false, &mut |a, b| {
                let (Some(w), Some(i)) = (a.string(), b.and_then(|b| b.string())) else {
                    return Ok(B::Unknown);
                };
                Ok(if w.as_bytes().starts_with(i.as_bytes()) { B::True } else { B::False })
            }),
            Item::LikeRegex { expr, pattern, flags } => {
                let mut re = None;
                self.predicate(expr, None, jb, false, &mut |a, _| {
                    let Some(s) = a.string() else { return Ok(B::Unknown) };
                    if re.is_none() {
                        re = Some(super::regex::compile(pattern, *flags)?);
                    }
                    Ok(if re.as_ref().expect("compiled").is_match(s) { B::True } else { B::False })
                })
            }
            Item::Unary(UnOp::Exists, a) => {
                if !self.lax {
                    let mut vals = Vec::new();
                    let res = self.opt_unwrap_result_no_throw(a, jb, false, Some(&mut vals))?;
                    if res == Res::Error {
                        return Ok(B::Unknown);
                    }
                    return Ok(if vals.is_empty() { B::False } else { B::True });
                }
                let res = self.opt_unwrap_result_no_throw(a, jb, false, None)?;
                Ok(match res {
                    Res::Error => B::Unknown,
                    Res::Ok => B::True,
                    Res::NotFound => B::False,
                })
            }
            other => unreachable!("not a predicate: {other:?}"),
        }
    }

    /// executePredicate: applies `exec` to every pair of left and right
    /// items.
    fn predicate(
        &mut self,
        l: &Chain,
        r: Option<&Chain>,
        jb: &It,
        unwrap_right: bool,
        exec: &mut PredFn<'_>,
    ) -> Result<B, SqlError> {
        let mut lseq = Vec::new();
        if self.opt_unwrap_result_no_throw(l, jb, true, Some(&mut lseq))? == Res::Error {
            return Ok(B::Unknown);
        }
        let mut rseq = Vec::new();
        if let Some(r) = r {
            if self.opt_unwrap_result_no_throw(r, jb, unwrap_right, Some(&mut rseq))? == Res::Error {
                return Ok(B::Unknown);
            }
        }
        let mut error = false;
        let mut found = false;
        for lv in &lseq {
            let rights: Vec<Option<&It>> =
                if r.is_some() { rseq.iter().map(Some).collect() } else { vec![None] };
            for rv in rights {
                match exec(lv, rv)? {
                    B::Unknown => {
                        if !self.lax {
                            return Ok(B::Unknown);
                        }
                        error = true;
                    }
                    B::True => {
                        if self.lax {
                            return Ok(B::True);
                        }
                        found = true;
                    }
                    B::False => {}
                }
            }
        }
        Ok(if found {
            B::True
        } else if error {
            B::Unknown
        } else {
            B::False
        })
    }

    fn binary_arith(
        &mut self,
        c: &[Item],
        op: BinOp,
        l: &Chain,
        r: &Chain,
        jb: &It,
        found: Option<&mut Vec<It>>,
    ) -> R {
        let mut lseq = Vec::new();
        let res = self.opt_unwrap_result(l, jb, true, Some(&mut lseq))?;
        if res == Res::Error {
            return Ok(res);
        }
        let mut rseq = Vec::new();
        let res = self.opt_unwrap_result(r, jb, true, Some(&mut rseq))?;
        if res == Res::Error {
            return Ok(res);
        }
        let lv = match (lseq.len(), lseq.first().and_then(It::number)) {
            (1, Some(n)) => n.clone(),
            _ => ret_err!(
                self,
                err(
                    SqlState::SINGLETON_SQL_JSON_ITEM_REQUIRED,
                    format!("left operand of jsonpath operator {} is not a single numeric value", op.name())
                )
            ),
        };
        let rv = match (rseq.len(), rseq.first().and_then(It::number)) {
            (1, Some(n)) => n.clone(),
            _ => ret_err!(
                self,
                err(
                    SqlState::SINGLETON_SQL_JSON_ITEM_REQUIRED,
                    format!("right operand of jsonpath operator {} is not a single numeric value", op.name())
                )
            ),
        };
        let v = match op {
            BinOp::Add => lv.add(&rv),
            BinOp::Sub => lv.sub(&rv),
            BinOp::Mul => lv.mul(&rv),
            BinOp::Div => lv.div(&rv),
            _ => lv.rem(&rv),
        };
        let v = match v {
            Ok(v) => v,
            Err(e) => ret_err!(self, e),
        };
        if c.len() == 1 && found.is_none() {
            return Ok(Res::Ok);
        }
        self.next(c, It::free(Jsonb::Number(v)), found)
    }

    fn unary_arith(
        &mut self,
        c: &[Item],
        minus: bool,
        a: &Chain,
        jb: &It,
        mut found: Option<&mut Vec<It>>,
    ) -> R {
        let mut seq = Vec::new();
        let res = self.opt_unwrap_result(a, jb, true, Some(&mut seq))?;
        if res == Res::Error {
            return Ok(res);
        }
        let has_next = c.len() > 1;
        let mut res = Res::NotFound;
        for it in seq {
            let Some(n) = it.number() else {
                if found.is_none() && !has_next {
                    continue;
                }
                ret_err!(
                    self,
                    err(
                        SqlState::SQL_JSON_NUMBER_NOT_FOUND,
                        format!(
                            "operand of unary jsonpath operator {} is not a numeric value",
                            if minus { "-" } else { "+" }
                        )
                    )
                )
            };
            if found.is_none() && !has_next {
                return Ok(Res::Ok);
            }
            let v = if minus { n.neg() } else { n.clone() };
            let r = self.next(c, It::free(Jsonb::Number(v)), found.as_deref_mut())?;
            if r == Res::Error {
                return Ok(r);
            }
            if r == Res::Ok {
                if found.is_none() {
                    return Ok(Res::Ok);
                }
                res = Res::Ok;
            }
        }
        Ok(res)
    }
}

/// compareItems: SQL/JSON comparison of two items.
fn compare_items(op: BinOp, a: &It, b: Option<&It>) -> Result<B, SqlError> {
    let b = b.expect("comparison has a right operand");
    let kind = |i: &It| match &i.v {
        V::J(Jsonb::Null) => 0,
        V::J(Jsonb::Bool(_)) => 1,
        V::J(Jsonb::Number(_)) => 2,
        V::J(Jsonb::String(_)) => 3,
        V::Dt(_) => 4,
        V::J(_) => 5,
    };
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        if ka == 0 || kb == 0 {
            return Ok(if op == BinOp::Ne { B::True } else { B::False });
        }
        return Ok(B::Unknown);
    }
    let ord = match (&a.v, &b.v) {
        (V::J(Jsonb::Null), V::J(Jsonb::Null)) => Ordering::Equal,
        (V::J(Jsonb::Bool(x)), V::J(Jsonb::Bool(y))) => x.cmp(y),
        (V::J(Jsonb::Number(x)), V::J(Jsonb::Number(y))) => x.cmp(y),
        (V::J(Jsonb::String(x)), V::J(Jsonb::String(y))) => x.as_bytes().cmp(y.as_bytes()),
        (V::Dt(x), V::Dt(y)) => match super::datetime::compare(x, y)? {
            Some(o) => o,
            None => return Ok(B::Unknown),
        },
        _ => return Ok(B::Unknown),
    };
    let r = match op {
        BinOp::Eq => ord == Ordering::Equal,
        BinOp::Ne => ord != Ordering::Equal,
        BinOp::Lt => ord == Ordering::Less,
        BinOp::Gt => ord == Ordering::Greater,
        BinOp::Le => ord != Ordering::Greater,
        _ => ord != Ordering::Less,
    };
    Ok(if r { B::True } else { B::False })
}
