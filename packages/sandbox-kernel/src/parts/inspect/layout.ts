import type { Intrinsics } from "./intrinsics.js";
import { BREAK_LENGTH, COMPACT, type Ctx, kArrayExtrasType, type List, MAX_ARRAY_LENGTH } from "./shared.js";
import type { Text } from "./text.js";
import type { Values } from "./values.js";

/**
 * GUEST REALM. Node's layout rules: numbers grouped into aligned columns, one line or many.
 */
export function makeLayout(I: Intrinsics, V: Values, T: Text) {
  const {
    getOwnDescriptor,
    mathFloor,
    mathMax,
    mathMin,
    mathRound,
    mathSqrt,
    padEnd,
    padStart,
    stringIncludes,
    stringRepeat,
  } = I;
  const { isDataDesc, join, newList, push } = V;
  const { stringWidth } = T;

  const isNumericAt = (value: object, index: number, typed: boolean): boolean => {
    if (typed) {
      const element = (value as unknown as List<unknown>)[index];
      return typeof element === "number" || typeof element === "bigint";
    }
    const desc = getOwnDescriptor(value, `${index}`);
    if (desc === undefined || !isDataDesc(desc)) return false;
    return typeof desc.value === "number" || typeof desc.value === "bigint";
  };

  const groupArrayElements = (
    ctx: Ctx,
    output: List<string>,
    value: object | undefined,
    typed: boolean,
  ): List<string> => {
    let totalLength = 0;
    let maxLength = 0;
    let outputLength = output.length;
    if (MAX_ARRAY_LENGTH < output.length) outputLength--;
    const separatorSpace = 2;
    const dataLen: List<number> = newList();
    for (let i = 0; i < outputLength; i++) {
      const len = stringWidth(output[i]!);
      dataLen[i] = len;
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    dataLen.length = outputLength;
    const actualMax = maxLength + separatorSpace;
    if (
      actualMax * 3 + ctx.indentationLvl < BREAK_LENGTH &&
      (totalLength / actualMax > 5 || maxLength <= 6)
    ) {
      const averageBias = mathSqrt(actualMax - totalLength / output.length);
      const biasedMax = mathMax(actualMax - 3 - averageBias, 1);
      const columns = mathMin(
        mathRound(mathSqrt(2.5 * biasedMax * outputLength) / biasedMax),
        mathFloor((BREAK_LENGTH - ctx.indentationLvl) / actualMax),
        COMPACT * 4,
        15,
      );
      if (columns <= 1) return output;
      const grouped: List<string> = newList();
      const maxLineLength: List<number> = newList();
      for (let i = 0; i < columns; i++) {
        let lineMaxLength = 0;
        for (let j = i; j < output.length; j += columns) {
          const len = dataLen[j];
          if (len !== undefined && len > lineMaxLength) lineMaxLength = len;
        }
        maxLineLength[i] = lineMaxLength + separatorSpace;
      }
      let alignRight = true;
      if (value !== undefined) {
        for (let i = 0; i < output.length; i++) {
          if (!isNumericAt(value, i, typed)) {
            alignRight = false;
            break;
          }
        }
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = mathMin(i + columns, outputLength);
        let line = "";
        let j = i;
        for (; j < max - 1; j++) {
          const padding = maxLineLength[j - i]! + output[j]!.length - dataLen[j]!;
          line += alignRight
            ? padStart(`${output[j]}, `, padding, " ")
            : padEnd(`${output[j]}, `, padding, " ");
        }
        if (alignRight) {
          const padding = maxLineLength[j - i]! + output[j]!.length - dataLen[j]! - separatorSpace;
          line += padStart(output[j]!, padding, " ");
        } else {
          line += output[j];
        }
        push(grouped, line);
      }
      if (MAX_ARRAY_LENGTH < output.length) push(grouped, output[outputLength]!);
      return grouped;
    }
    return output;
  };

  const isBelowBreakLength = (output: List<string>, start: number, base: string): boolean => {
    let totalLength = output.length + start;
    if (totalLength + output.length > BREAK_LENGTH) return false;
    for (let i = 0; i < output.length; i++) {
      totalLength += output[i]!.length;
      if (totalLength > BREAK_LENGTH) return false;
    }
    return base === "" || !stringIncludes(base, "\n");
  };

  const reduceToSingleString = (
    ctx: Ctx,
    initial: List<string>,
    base: string,
    braces: List<string>,
    extrasType: number,
    recurseTimes: number,
    value: object | undefined,
    typed: boolean,
  ): string => {
    let output = initial;
    const entries = output.length;
    if (extrasType === kArrayExtrasType && entries > 6)
      output = groupArrayElements(ctx, output, value, typed);
    if (ctx.currentDepth - recurseTimes < COMPACT && entries === output.length) {
      const start = output.length + ctx.indentationLvl + braces[0]!.length + base.length + 10;
      if (isBelowBreakLength(output, start, base)) {
        const joined = join(output, ", ");
        if (!stringIncludes(joined, "\n")) {
          return `${base ? `${base} ` : ""}${braces[0]} ${joined} ${braces[1]}`;
        }
      }
    }
    const indentation = `\n${stringRepeat(" ", ctx.indentationLvl)}`;
    return `${base ? `${base} ` : ""}${braces[0]}${indentation}  ${join(output, `,${indentation}  `)}${indentation}${braces[1]}`;
  };

  return { __proto__: null, reduceToSingleString };
}

export type Layout = ReturnType<typeof makeLayout>;
