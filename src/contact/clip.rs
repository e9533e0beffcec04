//! Face clipping (Sutherland–Hodgman) and reduction of a contact polygon to at most 4 points.
