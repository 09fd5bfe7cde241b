//! Languages: which one a text is written in, as far as analysis and models need to know.
//!
//! Detection is by script, which is reliable where it matters here: Han, kana and Hangul
//! characters say Chinese, Japanese and Korean; anything else is [`Language::Other`] (the
//! English analyzer handles Latin text, and no model decision depends on telling Latin
//! languages apart). A record's `lang` keyword, when present, overrides detection.

use serde::{Deserialize, Serialize};

/// A language as analysis and models see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Language {
    /// English.
    En,
    /// Chinese (simplified or traditional).
    Zh,
    /// Japanese.
    Ja,
    /// Korean.
    Ko,
    /// Anything else, or not known (Latin text without a `lang` is this).
    Other,
}

impl Language {
    /// The language of a BCP 47 tag's primary subtag (`zh-CN` → `Zh`); unknown tags are
    /// [`Language::Other`].
    pub fn from_tag(tag: &str) -> Language {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
        match primary.as_str() {
            "en" | "eng" => Language::En,
            "zh" | "zho" | "chi" | "cmn" | "yue" => Language::Zh,
            "ja" | "jpn" => Language::Ja,
            "ko" | "kor" => Language::Ko,
            _ => Language::Other,
        }
    }

    /// The two-letter code (`other` for [`Language::Other`]).
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Zh => "zh",
            Language::Ja => "ja",
            Language::Ko => "ko",
            Language::Other => "other",
        }
    }

    /// Whether the language is written in CJK scripts.
    pub fn is_cjk(self) -> bool {
        matches!(self, Language::Zh | Language::Ja | Language::Ko)
    }

    /// Detects a CJK language by script: a text is Chinese, Japanese or Korean when its CJK
    /// characters weigh at least as much as its other letters and digits (one CJK character
    /// counts as three Latin ones, about a word each), so "Obsidian Sync 同步失败" is Chinese
    /// and an English article quoting one Chinese name is not. Hangul makes it Korean, any
    /// kana Japanese, Han alone Chinese. Everything else is [`Language::Other`].
    pub fn detect(text: &str) -> Language {
        let (mut han, mut kana, mut hangul, mut other) = (0usize, 0usize, 0usize, 0usize);
        for c in text.chars() {
            if is_han(c) {
                han += 1;
            } else if is_kana(c) {
                kana += 1;
            } else if is_hangul(c) {
                hangul += 1;
            } else if c.is_alphanumeric() {
                other += 1;
            }
        }
        let cjk = han + kana + hangul;
        if cjk == 0 || cjk * 3 < other {
            return Language::Other;
        }
        if hangul >= han + kana {
            Language::Ko
        } else if kana > 0 {
            Language::Ja
        } else {
            Language::Zh
        }
    }
}

/// Whether `c` is a Han ideograph (CJK Unified Ideographs and their extensions, compatibility
/// ideographs).
pub fn is_han(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2FA1F}'
        | '\u{3005}' | '\u{3007}')
}

/// Whether `c` is Japanese kana (hiragana, katakana, half-width katakana, prolonged sound mark).
pub fn is_kana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{309F}' | '\u{30A0}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}' | '\u{FF66}'..='\u{FF9F}')
}

/// Whether `c` is Korean Hangul (syllables and jamo).
pub fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7AF}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
}

/// Whether `c` is written in a CJK script (Han, kana or Hangul).
pub fn is_cjk(c: char) -> bool {
    is_han(c) || is_kana(c) || is_hangul(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_script() {
        assert_eq!(Language::detect("同步失败怎么办"), Language::Zh);
        assert_eq!(Language::detect("Obsidian Sync 同步失败"), Language::Zh);
        assert_eq!(Language::detect("Please contact 王伟 about the refund policy"), Language::Other);
        assert_eq!(Language::detect("同期に失敗しました"), Language::Ja);
        assert_eq!(Language::detect("동기화 실패"), Language::Ko);
        assert_eq!(Language::detect("vitamin d deficiency"), Language::Other);
        assert_eq!(Language::detect(""), Language::Other);
    }

    #[test]
    fn tags() {
        assert_eq!(Language::from_tag("zh-CN"), Language::Zh);
        assert_eq!(Language::from_tag("EN"), Language::En);
        assert_eq!(Language::from_tag("fr"), Language::Other);
        assert_eq!(Language::Ja.code(), "ja");
    }
}
