//! The JSON exporter and the one reader of result files: an error names the file and the
//! field that is wrong.

use std::path::Path;

use super::ExportError;

/// Pretty JSON text of a result.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, ExportError> {
    serde_json::to_string_pretty(value).map_err(|e| ExportError::Serialize(e.to_string()))
}

/// Read a JSON file written by a command; an error names the file and the field.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ExportError> {
    let text = super::input::read_input_text(path).map_err(|e| ExportError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| ExportError::Read {
        path: path.to_path_buf(),
        message: format!("field {}: {}", e.path(), e.inner()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_field_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("x.json");
        std::fs::write(&path, r#"{"a": {"b": "no"}}"#).expect("writes");
        #[derive(serde::Deserialize, Debug)]
        struct Inner {
            #[allow(dead_code)]
            b: f64,
        }
        #[derive(serde::Deserialize, Debug)]
        struct Outer {
            #[allow(dead_code)]
            a: Inner,
        }
        let err = read_json::<Outer>(&path).expect_err("a string is not a number");
        let text = err.to_string();
        assert!(text.contains("x.json: field a.b: invalid type"), "{text}");
    }
}
