// GraphQL object types read off the zod views the REST routes answer with (each area's schemas.ts), so a field
// added to a view shows in GraphQL under the same name with no second edit. Each field's GraphQL type follows
// from its zod type: strings and enums String (enum values such as nvidia-l4 are no GraphQL names, and the
// schema has always published them as String), integers Int, other numbers Float, booleans Boolean, arrays
// lists, a nested object the type the caller names for it; what GraphQL has no type for (records, unnamed
// nested objects, unions, unknown) is JSON. Every field is nullable, Pothos's default: a field that fails is
// null alone.
import type { ObjectRef, SchemaTypes, TypeParam } from '@pothos/core';
import { z } from 'zod';

export interface ViewTypeOptions {
  description?: string;
  /** The field that identifies the object, GraphQL's ID; `id` when left out. */
  id?: string;
  /** Nested objects (or lists of them) given a GraphQL type of their own, by field; other nested objects are JSON. */
  objects?: Record<string, NestedViewType>;
}

export interface NestedViewType extends ViewTypeOptions {
  name: string;
}

/** The value a field holds when present: nullability is the field's own, and every field is nullable. */
function whenPresent(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodNullable || schema instanceof z.ZodOptional ? whenPresent(schema.unwrap() as z.ZodType) : schema;
}

/** The object schema of a nested field that gets its own type: the field's object, or its list's item. */
function nestedObject(field: string, schema: z.ZodType | undefined): z.ZodObject {
  const value = schema && whenPresent(schema);
  const object = value instanceof z.ZodArray ? whenPresent(value.element as z.ZodType) : value;
  if (!(object instanceof z.ZodObject)) throw new Error(`the view's field ${field} is no object nor list of objects`);
  return object;
}

/** GraphQL's named type for one value, a list's item included (items are non-null, Pothos's default: a list that may hold null is JSON). */
function namedType<Types extends SchemaTypes>(schema: z.ZodType, objectType: ObjectRef<Types, unknown> | undefined): TypeParam<Types> | 'JSON' {
  if (schema instanceof z.ZodObject) return objectType ?? 'JSON';
  if (schema instanceof z.ZodNumber) return schema.isInt ? 'Int' : 'Float';
  if (schema instanceof z.ZodLiteral) {
    const values = [...schema.values];
    if (values.every((value) => typeof value === 'string')) return 'String';
    if (values.every((value) => typeof value === 'boolean')) return 'Boolean';
    if (values.every((value) => Number.isInteger(value))) return 'Int';
    return 'JSON';
  }
  // String formats (datetime, url) are no ZodString: their def says string.
  switch (schema.def.type) {
    case 'string':
    case 'enum': return 'String';
    case 'boolean': return 'Boolean';
    default: return 'JSON';
  }
}

function fieldType<Types extends SchemaTypes>(schema: z.ZodType, objectType: ObjectRef<Types, unknown> | undefined): TypeParam<Types> | 'JSON' {
  const value = whenPresent(schema);
  if (!(value instanceof z.ZodArray)) return namedType(value, objectType);
  const item = namedType(value.element as z.ZodType, objectType);
  return item === 'JSON' ? 'JSON' : [item] as TypeParam<Types>;
}

/**
 * The GraphQL object type of a REST view: one field per field of the view. `Shape` is what resolvers hand it:
 * the view's output, or another shape with every field of the view (a page: the pagination fields and its items).
 */
export function objectTypeOfView<Types extends SchemaTypes, View extends z.ZodObject, Shape extends Record<keyof z.output<View>, unknown> = z.output<View>>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  name: string,
  view: View,
  options: ViewTypeOptions = {},
): ObjectRef<Types, Shape> {
  const shape: Record<string, z.ZodType> = view.shape;
  const objectTypes = new Map(Object.entries(options.objects ?? {}).map(([field, { name: typeName, ...nested }]) => (
    [field, objectTypeOfView<Types, z.ZodObject, Record<string, unknown>>(builder, typeName, nestedObject(field, shape[field]), nested)]
  )));
  const idField = options.id ?? 'id';
  return builder.objectRef<Shape>(name).implement({
    description: options.description,
    fields: (t) => Object.fromEntries(Object.entries(shape).map(([field, schema]) => {
      const type = field === idField ? 'ID' : fieldType(schema, objectTypes.get(field));
      // The view's field names are strings Pothos cannot check against Shape here; the view and Shape agree by the signature.
      return [field, t.expose(field as never, { type } as never)];
    })),
  });
}
