use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use super::*;
use crate::{SqlType, Zone};

fn parse(elem: SqlType, text: &str) -> Result<Array, SqlError> {
    match parse_array(elem, text, Zone::UTC)? {
        Value::Array(a) => Ok((*a).clone()),
        other => panic!("{other:?}"),
    }
}

fn round(elem: SqlType, text: &str) -> String {
    format_array(&parse(elem, text).unwrap(), Zone::UTC)
}

fn detail(text: &str) -> String {
    let e = parse(SqlType::Text, text).unwrap_err();
    assert_eq!(e.code, SqlState::INVALID_TEXT_REPRESENTATION, "{text}");
    e.detail.clone().unwrap()
}

#[test]
fn text_form_as_postgresql_writes_it() {
    assert_eq!(round(SqlType::Int4, "{1, 2 ,3}"), "{1,2,3}");
    assert_eq!(round(SqlType::Int4, "{}"), "{}");
    assert_eq!(round(SqlType::Int4, " { 1 , NULL } "), "{1,NULL}");
    assert_eq!(
        round(SqlType::Text, r#"{a,"b c","","NULL",NULL,"q\"x",d\,e}"#),
        r#"{a,"b c","","NULL",NULL,"q\"x","d,e"}"#
    );
    assert_eq!(round(SqlType::Text, "{ab cd }"), r#"{"ab cd"}"#);
    assert_eq!(round(SqlType::Text, r"{N\ULL}"), "{\"NULL\"}");
}

#[test]
fn dimensions_from_braces_and_decoration() {
    let a = parse(SqlType::Int4, "{{1,2,3},{4,5,6}}").unwrap();
    assert_eq!(a.dims(), &[Dim { lower: 1, len: 2 }, Dim { lower: 1, len: 3 }]);
    assert_eq!(a.get(&[2, 1]), Some(&Value::Int(4)));
    assert_eq!(a.get(&[3, 1]), None);
    assert_eq!(round(SqlType::Int4, " [0:1] = { 7 , 8 }"), "[0:1]={7,8}");
    assert_eq!(round(SqlType::Int4, "[1:2][1:1]={{1},{2}}"), "{{1},{2}}");
    assert_eq!(round(SqlType::Text, "{ { \",\" } , { 3 } }"), "{{\",\"},{3}}");
    assert_eq!(round(SqlType::Int4, "{{{{{{1}}}}}}"), "{{{{{{1}}}}}}");
    assert_eq!(
        parse(SqlType::Int4, "[-2147483648:-2147483647]={1,2}").unwrap().dims_text().unwrap(),
        "[-2147483648:-2147483647]"
    );
}

#[test]
fn malformed_input_names_what_broke_it() {
    assert_eq!(detail("{{1,{2}},{2,3}}"), "Unexpected \"{\" character.");
    assert_eq!(detail("{{},{}}"), "Unexpected \"}\" character.");
    assert_eq!(detail(r"{{1,2},\{2,3}}"), "Unexpected \"\\\" character.");
    assert_eq!(detail("{{\"1 2\" x},{3}}"), "Unexpected array element.");
    assert_eq!(detail("{}}"), "Junk after closing right brace.");
    assert_eq!(detail("{ }}"), "Junk after closing right brace.");
    assert_eq!(
        detail("{{1,2},{3}}"),
        "Multidimensional arrays must have sub-arrays with matching dimensions."
    );
    assert_eq!(
        detail("{{1},{{2}}}"),
        "Multidimensional arrays must have sub-arrays with matching dimensions."
    );
    assert_eq!(detail("{1,,2}"), "Unexpected \",\" character.");
    assert_eq!(detail("{1,2"), "Unexpected end of input.");
    assert_eq!(detail("1,2"), "Array value must start with \"{\" or dimension information.");
    assert_eq!(detail("[1:2]{1,2}"), "Missing \"=\" after array dimensions.");
    assert_eq!(detail("[1:3]={1,2}"), "Specified array dimensions do not match array contents.");
    assert_eq!(detail("[a]={1}"), "\"[\" must introduce explicitly-specified array dimensions.");
    assert_eq!(detail("[1:]={1}"), "Missing array dimension value.");
    assert_eq!(detail("[1:2={1}"), "Missing \"]\" after array dimensions.");
    assert_eq!(detail("[1:2]=x"), "Array contents must start with \"{\".");
    assert_eq!(parse(SqlType::Int4, "{{{{{{{1}}}}}}}").unwrap_err().code, SqlState::PROGRAM_LIMIT_EXCEEDED);
    assert_eq!(parse(SqlType::Int4, "[2:1]={}").unwrap_err().code, SqlState::ARRAY_SUBSCRIPT_ERROR);
    assert_eq!(
        parse(SqlType::Int4, "[2147483647:2147483647]={1}").unwrap_err().code,
        SqlState::PROGRAM_LIMIT_EXCEEDED
    );
    assert_eq!(parse(SqlType::Int4, "{x}").unwrap_err().code, SqlState::INVALID_TEXT_REPRESENTATION);
}

#[test]
fn ordering_looks_at_shape_after_elements() {
    let a = |t: &str| parse(SqlType::Int4, t).unwrap();
    assert_eq!(a("{1,2}").compare(&a("{1,3}")), Some(Ordering::Less));
    assert_eq!(a("{1,2}").compare(&a("{1,2,0}")), Some(Ordering::Less));
    assert_eq!(a("{1,2}").compare(&a("{{1,2}}")), Some(Ordering::Less));
    assert_eq!(a("{{1,2},{3,4}}").compare(&a("{{1,2,3,4}}")), Some(Ordering::Greater));
    assert_eq!(a("[0:1]={1,2}").compare(&a("{1,2}")), Some(Ordering::Less));
    assert_eq!(a("{1,NULL}").compare(&a("{1,NULL}")), Some(Ordering::Equal));
    assert_eq!(a("{1,NULL}").compare(&a("{1,5}")), Some(Ordering::Greater));
}
