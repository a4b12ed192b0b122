/**
 * customer/add (docs/api-catalogue.md §6, "Write operations"): an array of at most 100
 * customers, each with `name` and `mobile` (required) and optional `type` (1 retail, the
 * default, 2 wholesale), `address`, `gender` (1 male, 2 female), `birthday` (Y-m-d),
 * `email`, `code`. Answers `data[{ id, mobile }]`, one entry per item in order.
 *
 * The mobile is the customer's key: the v1 and v2 references say an item whose mobile is known
 * updates that customer; the v3 text is silent, so the simulator keeps that behaviour
 * (inferred for v3). An update answers the existing id and counts no effect. The service has
 * no customer webhook (§10).
 */
import { isObj } from "./ApiCall.ts"
import { answered, refuse, type WriteCall } from "./WriteCall.ts"
import type { Customer } from "./Catalog.ts"
import { Form } from "./internal/Form.ts"

export const customerAdd = (w: WriteCall) => {
  const { body, business } = w
  const items = Array.isArray(body) ? body : isObj(body) && Array.isArray(body["customers"]) ? body["customers"] : undefined
  if (items === undefined) return refuse(w, { customers: "expected an array of customers" })
  const form = new Form()
  const max = w.op.entry.maxItems ?? 100
  if (items.length === 0) form.fail("customers", "must not be empty")
  if (items.length > max) form.fail("customers", `at most ${max} customers per call`)
  const seen = new Set<string>()
  const valid = form.each(items, "customers", (item, at) => {
    const name = form.str(item, "name", `${at}.name`, { required: true, max: 255 })
    const mobile = form.str(item, "mobile", `${at}.mobile`, { required: true, max: 20 })
    if (mobile !== undefined && !/^\+?[0-9]{8,15}$/.test(mobile)) form.fail(`${at}.mobile`, "must be a phone number")
    else if (mobile !== undefined && seen.has(mobile)) form.fail(`${at}.mobile`, "appears twice in this call")
    if (mobile !== undefined) seen.add(mobile)
    const type = form.oneOf(item, "type", `${at}.type`, [1, 2])
    const email = form.str(item, "email", `${at}.email`, { max: 255 })
    if (email !== undefined && email !== "" && !/^[^@\s]+@[^@\s]+$/.test(email)) form.fail(`${at}.email`, "must be an email address")
    const gender = form.oneOf(item, "gender", `${at}.gender`, [1, 2])
    const address = form.str(item, "address", `${at}.address`)
    const birthday = form.str(item, "birthday", `${at}.birthday`)
    if (birthday !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(birthday)) form.fail(`${at}.birthday`, "must be a date (Y-m-d)")
    const code = form.str(item, "code", `${at}.code`, { max: 255 })
    if (name === undefined || mobile === undefined) return undefined
    return { name, mobile, type, email, gender, address, code }
  })
  if (!form.ok) return refuse(w, form)
  const data = business.data
  const now = w.call.env.now()
  const out = valid.map((input) => {
    const known = data.customerByMobile(input.mobile)
    const fields: Partial<Omit<Customer, "id" | "updatedAtMs" | "mobile">> = Object.fromEntries(
      Object.entries({ name: input.name, type: input.type, email: input.email, gender: input.gender, address: input.address, code: input.code })
        .filter(([, v]) => v !== undefined)
    )
    if (known !== undefined) return data.updateCustomer(known.id, fields, now) ?? known
    const customer = data.addCustomer({
      type: 1,
      code: `KH${data.customers.positions + 1}`,
      email: "",
      gender: 1,
      address: "",
      points: 0,
      totalAmount: 0,
      ...fields,
      name: input.name,
      mobile: input.mobile
    }, now)
    data.effects.add({ kind: "customer.add", key: customer.mobile, id: customer.id, atMs: now })
    return customer
  })
  return answered(w, out.map((c) => ({ id: c.id, mobile: c.mobile })))
}
