/** Preact with htm: tagged templates instead of JSX, so the sources need no JSX transform. */
import htm from "htm"
import { h, type VNode } from "preact"

export { render } from "preact"
export { useEffect, useState } from "preact/hooks"
export const html: (strings: TemplateStringsArray, ...values: Array<unknown>) => VNode | Array<VNode> = htm.bind(h)
