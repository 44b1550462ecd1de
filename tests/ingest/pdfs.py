"""Tiny hand-written PDFs for loader tests (no PDF-writing library is installed).

``blank_pdf`` is a valid one-page PDF with no text. ``encrypted_pdf`` is the same page protected
with the standard security handler (revision 2, 40-bit RC4) and a non-empty user password, built
per the PDF 1.7 spec, algorithms 3.2-3.4.
"""

from __future__ import annotations

import hashlib

_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")
_FILE_ID = bytes(range(16))


def _rc4(key: bytes, data: bytes) -> bytes:
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out, i, j = bytearray(), 0, 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) % 256])
    return bytes(out)


def _padded(password: bytes) -> bytes:
    return (password + _PAD)[:32]


def _assemble(objects: list[bytes], trailer_extra: bytes = b"") -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, trailer_extra, xref)
    return bytes(out)


def _page(resources: bytes = b"", contents: bytes = b"") -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << %s >> %s>>" % (resources, contents),
    ]


def blank_pdf() -> bytes:
    return _assemble(_page())


def encrypted_pdf(text: str, user_password: bytes = b"user-secret", owner_password: bytes = b"owner-secret") -> bytes:
    """A one-page PDF showing ``text`` (ASCII), readable only with one of the passwords."""
    permissions = -44  # print/copy denied; any value works, it is part of the key
    owner = _rc4(hashlib.md5(_padded(owner_password)).digest()[:5], _padded(user_password))
    key = hashlib.md5(_padded(user_password) + owner + permissions.to_bytes(4, "little", signed=True)
                      + _FILE_ID).digest()[:5]
    user = _rc4(key, _PAD)
    stream = b"BT /F1 12 Tf 72 700 Td (%s) Tj ET" % text.encode("ascii")
    object_key = hashlib.md5(key + (5).to_bytes(3, "little") + b"\0\0").digest()[:10]  # algorithm 3.1
    objects = _page(b"/Font << /F1 4 0 R >>", b"/Contents 5 0 R ") + [
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), _rc4(object_key, stream)),
    ]
    encrypt = b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P %d /O <%s> /U <%s> >>" % (
        permissions, owner.hex().encode(), user.hex().encode())
    file_id = _FILE_ID.hex().encode()
    return _assemble(objects + [encrypt], b"/Encrypt 6 0 R /ID [<%s> <%s>] " % (file_id, file_id))
