/**
 * The service's icon, for GET /favicon.ico (browsers ask for it on every page of ours; a 404 there is noise in the
 * network panel and the request log): a 16x16 ICO drawn here, a blue map pin, so no binary file is kept in the
 * repository and the build copies nothing.
 */

const SIZE = 16;
/** #2563eb and white, as BGRA (the order a BMP stores). */
const PIN = [0xeb, 0x63, 0x25, 0xff];
const DOT = [0xff, 0xff, 0xff, 0xff];
const CLEAR = [0, 0, 0, 0];

/** The pin's colour at pixel (x, y), y counted from the top: a circle with a white dot, tapering to a point below. */
function pixel(x: number, y: number): number[] {
  const cx = 7.5;
  const cy = 6;
  const distance = Math.hypot(x - cx, y - cy);
  if (distance <= 2) return DOT;
  if (distance <= 5.5) return PIN;
  // The point: rows below the circle, narrowing by a pixel a row on each side.
  const halfWidth = 4.5 - (y - 9);
  return y > 9 && Math.abs(x - cx) <= halfWidth ? PIN : CLEAR;
}

function drawIcon(): Buffer {
  const pixels = SIZE * SIZE * 4;
  // The AND mask: one bit a pixel, rows padded to 4 bytes; all zero, the alpha channel decides.
  const mask = SIZE * 4;
  const image = 40 + pixels + mask;
  const icon = Buffer.alloc(6 + 16 + image);
  // ICONDIR: reserved, type 1 (icon), one image.
  icon.writeUInt16LE(0, 0);
  icon.writeUInt16LE(1, 2);
  icon.writeUInt16LE(1, 4);
  // ICONDIRENTRY: width, height, no palette, reserved, 1 plane, 32 bits, the image's size and offset.
  icon.writeUInt8(SIZE, 6);
  icon.writeUInt8(SIZE, 7);
  icon.writeUInt16LE(1, 10);
  icon.writeUInt16LE(32, 12);
  icon.writeUInt32LE(image, 14);
  icon.writeUInt32LE(22, 18);
  // BITMAPINFOHEADER: its size, width, height doubled (the colours and the mask), 1 plane, 32 bits, no compression.
  icon.writeUInt32LE(40, 22);
  icon.writeInt32LE(SIZE, 26);
  icon.writeInt32LE(SIZE * 2, 30);
  icon.writeUInt16LE(1, 34);
  icon.writeUInt16LE(32, 36);
  icon.writeUInt32LE(pixels + mask, 42);
  // Rows bottom-up, as a BMP stores them.
  let offset = 62;
  for (let row = SIZE - 1; row >= 0; row -= 1) {
    for (let x = 0; x < SIZE; x += 1) {
      for (const byte of pixel(x, row)) icon.writeUInt8(byte, offset++);
    }
  }
  return icon;
}

export const FAVICON = drawIcon();
